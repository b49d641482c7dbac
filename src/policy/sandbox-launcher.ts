/**
 * The launcher: a small Perl program (`perl-base` is essential on Debian and Ubuntu; the fallback's watchdog uses it
 * too) that starts bubblewrap for a sandboxed command. It exists because a spawn from Node can hand bubblewrap
 * neither a seccomp program nor a mount that only the sandbox sees:
 *
 * - It writes the seccomp program (see `sandbox-seccomp.ts`) into a pipe and execs bubblewrap with
 *   `--seccomp <fd>` reading it.
 * - When rein runs as root (`mapped`), it also gives the command an identity the kernel does not see as root. It
 *   makes a user namespace whose only mapping is `<owner> → <uid>` (the workspace folder's owner on disk, an unused
 *   uid in the kernel), enters a mount namespace of its own (private: nothing propagates to the host), and puts over
 *   the workspace an idmapped copy of it (`open_tree`, `mount_setattr(MOUNT_ATTR_IDMAP)`, `move_mount`): through that
 *   mount the owner's files belong to `<uid>`, and files `<uid>` creates are written as the owner's. bubblewrap binds
 *   that mount like any other (it keeps its idmapping), and the command is switched to `<uid>` inside the sandbox
 *   (`setpriv`, see `sandbox-identity.ts`).
 *
 * It prints one line to stderr and exits 125 when a step fails, naming the step.
 */
export const launcherProgram = String.raw`
use strict;
my ($unshare_nr, $mount_nr, $seccomp, $mode) = splice(@ARGV, 0, 4);
sub fail { print STDERR "rein sandbox launcher: $_[0]\n"; exit 125 }
my $identity;
my @options;
# Data bubblewrap reads from a pipe (a seccomp program, a file's text): the fd it can read it from.
sub piped {
  my ($bytes) = @_;
  pipe(my $read, my $write) or fail("pipe: $!");
  syswrite($write, $bytes) == length($bytes) or fail("writing to a pipe: $!");
  close $write;
  fcntl($read, 2, 0) or fail("fcntl: $!");
  push @options, $read;
  return fileno($read);
}
sub host_file { my ($path) = @_; open(my $file, '<', $path) or return ''; local $/; my $text = <$file>; close $file; return defined $text ? $text : '' }
if ($mode eq 'mapped') {
  my ($uid, $owner_uid, $owner_gid, $workspace, $home) = splice(@ARGV, 0, 5);
  $identity = [$uid, $home];
  # A user namespace holding only the mapping: made by a child, mapped by this process (root), kept by an open fd.
  pipe(my $made_r, my $made_w) or fail("pipe: $!");
  pipe(my $done_r, my $done_w) or fail("pipe: $!");
  my $child = fork;
  defined $child or fail("fork: $!");
  if ($child == 0) {
    close $made_r; close $done_w;
    syscall($unshare_nr, 0x10000000) == 0 or do { syswrite($made_w, "unshare(CLONE_NEWUSER): $!"); require POSIX; POSIX::_exit(1) };
    syswrite($made_w, 'ok');
    sysread($done_r, my $ignored, 1);
    exit 0;
  }
  close $made_w; close $done_r;
  sysread($made_r, my $made, 200);
  $made eq 'ok' or fail($made || 'the user namespace helper died');
  for my $map (['uid_map', "$owner_uid $uid 1\n"], ['gid_map', "$owner_gid $uid 1\n"]) {
    open(my $file, '>', "/proc/$child/$map->[0]") or fail("$map->[0]: $!");
    syswrite($file, $map->[1]) or fail("writing $map->[0]: $!");
    close $file;
  }
  open(my $namespace, '<', "/proc/$child/ns/user") or fail("the user namespace: $!");
  close $done_w;
  waitpid($child, 0);
  my ($none, $root, $empty, $source, $target) = ('none', '/', '', "$workspace", "$workspace");
  syscall($unshare_nr, 0x00020000) == 0 or fail("unshare(CLONE_NEWNS): $!");
  # MS_REC | MS_PRIVATE: nothing mounted here reaches the host.
  syscall($mount_nr, $none, $root, 0, 0x44000, 0) == 0 or fail("making mounts private: $!");
  # OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
  my $tree = syscall(428, -100, $source, 0x1 | 0x80000 | 0x8000);
  $tree >= 0 or fail("open_tree: $!");
  # struct mount_attr { attr_set = MOUNT_ATTR_IDMAP, attr_clr, propagation, userns_fd }
  my $attributes = pack('QQQQ', 0x100000, 0, 0, fileno($namespace));
  syscall(442, $tree, $empty, 0x1000, $attributes, 32) == 0 or fail("idmapped mount (mount_setattr): $!");
  # MOVE_MOUNT_F_EMPTY_PATH
  syscall(429, $tree, $empty, -100, $target, 0x4) == 0 or fail("move_mount: $!");
}
elsif ($mode ne 'plain') { fail("unknown mode $mode") }
my @command = @ARGV;
my @added;
push @added, '--seccomp', piped(pack('H*', $seccomp)) if $seccomp ne '-';
if ($identity) {
  # The command's uid has a name (whoami, getpwuid): the host's passwd and group files plus one line each.
  my ($uid, $home) = @$identity;
  for my $file (['/etc/passwd', "rein-sandbox:x:$uid:$uid:rein sandbox:$home:/bin/sh\n"], ['/etc/group', "rein-sandbox:x:$uid:\n"]) {
    my $text = host_file($file->[0]);
    $text .= "\n" if length($text) && substr($text, -1) ne "\n";
    # A pipe holds 64 KiB until bubblewrap reads it: a larger file (a directory service's export) is left as it is.
    next if length($text) > 60000;
    push @added, '--perms', '0644', '--ro-bind-data', piped($text . $file->[1]), $file->[0];
  }
}
# Added as the last options (after the /etc bind, which they cover): before bubblewrap's own '--'.
my ($end) = grep { $command[$_] eq '--' } 1 .. $#command;
defined $end or fail('no -- in the bubblewrap command');
splice(@command, $end, 0, @added);
exec { $command[0] } @command or fail("cannot start $command[0]: $!");
`;

/** The numbers of `unshare` and `mount` per Node architecture (the new mount calls are 428, 429 and 442 everywhere). */
export const launcherSyscalls: Readonly<Record<string, readonly [unshare: number, mount: number]>> = { x64: [272, 165], arm64: [97, 40], riscv64: [97, 40], loong64: [97, 40] };

/** How the launcher starts bubblewrap: with a seccomp program, and (root) with the command's mapped identity. */
export interface LauncherOptions {
  /** The seccomp program's bytes, or null for none. */
  seccomp: Buffer | null;
  /** Root only: the unprivileged uid (and gid) the command runs as, the workspace and its owner on disk. */
  mapped?: { uid: number; ownerUid: number; ownerGid: number; workspace: string; home: string };
}

/** The argv prefix that runs `bwrap …` through the launcher, or null on an architecture it does not know. */
export const launcherPrefix = (options: LauncherOptions, arch: string = process.arch): string[] | null => {
  const numbers = launcherSyscalls[arch];
  if (!numbers) return null;
  const seccomp = options.seccomp ? options.seccomp.toString('hex') : '-';
  // The home goes into a passwd line: one a colon or a line break would split names `/` there instead.
  const home = options.mapped && /[:\n]/.test(options.mapped.home) ? '/' : options.mapped?.home;
  const mapped = options.mapped ? ['mapped', String(options.mapped.uid), String(options.mapped.ownerUid), String(options.mapped.ownerGid), options.mapped.workspace, home!] : ['plain'];
  return ['perl', '-e', launcherProgram, String(numbers[0]), String(numbers[1]), seccomp, ...mapped];
};
