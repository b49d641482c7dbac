import { spawnSync } from 'node:child_process';
import { probeKey } from '../policy/probe-key.js';

/**
 * The watchdog a fallback command (no bubblewrap) runs under, so that nothing it starts outlives rein or its call.
 *
 * It is a small Perl program (`perl-base` is an essential package on Debian and Ubuntu) that makes itself a *child
 * subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`), forks the command and waits. Being a subreaper, every process the
 * command starts stays below it whatever it does — `&`, `nohup`, `setsid`, a double fork, an `env -i` that drops the
 * `REIN_CALL` marker: an orphan is re-parented to the watchdog, not to init. It holds the read end of a socket on its
 * fd 3 whose other end only rein holds, so it sees rein die in any way (SIGKILL included) as end-of-file. Then, and
 * when the command exits, it kills everything below it and in its process group (and, when rein is gone, every
 * process carrying the call's marker), reaps them and exits with the command's own status. So the watchdog never
 * outlives its command, and its command never outlives rein. SIGTERM, SIGINT and SIGHUP sent to it are passed on to
 * the command (a soft timeout, or a `kill <pid>`). It writes a line to the socket, once: the pid it forked, and
 * `pid-namespace` or why there is none.
 *
 * The command runs as the same user as the watchdog, so it could kill the watchdog (`kill -9 $PPID`) and take the
 * subreaper away (trial 6 F15). Where the kernel allows it (root, or an unprivileged user namespace mapping the user
 * to itself) the watchdog therefore puts the command into a pid namespace of its own, below a small init of that
 * namespace: the watchdog has no pid there, so the command cannot name it, the init of a namespace ignores the
 * signals its own namespace sends it, and when the init ends (its command exited, or the watchdog killed it) the
 * kernel kills every process left in the namespace. Where no pid namespace can be made the line says why, and the
 * call's `lifetime` is reported as not enforced.
 */
const watchdogProgram = String.raw`
use strict;
my ($nr, $unshare) = (shift @ARGV, shift @ARGV);
if (syscall($nr, 36, 1, 0, 0, 0) != 0) { print STDERR "rein watchdog: cannot become a subreaper: $!\n"; exit 125 }
delete $ENV{PERL_BADLANG};
my $marker = $ENV{REIN_CALL};
open(my $control, '+<&=', 3) or do { print STDERR "rein watchdog: no control socket: $!\n"; exit 125 };
fcntl($control, 2, 1);
pipe(my $wake_r, my $wake_w) or do { print STDERR "rein watchdog: pipe: $!\n"; exit 125 };
pipe(my $ended_r, my $ended_w) or do { print STDERR "rein watchdog: pipe: $!\n"; exit 125 };
# The command's own pid namespace (CLONE_NEWPID), else one inside a user namespace mapping this user to itself.
sub write_file { my ($path, $text) = @_; open(my $file, '>', $path) or return 0; my $ok = syswrite($file, $text); close $file; return $ok }
my ($uid, $gid) = ($>, (split / /, $))[0]);
my $namespace = 'pid-namespace';
if (syscall($unshare, 0x20000000) != 0) {
  my $why = "$!";
  if (syscall($unshare, 0x30000000) == 0) {
    write_file('/proc/self/setgroups', "deny") if -e '/proc/self/setgroups';
    write_file('/proc/self/uid_map', "$uid $uid 1") && write_file('/proc/self/gid_map', "$gid $gid 1") or $namespace = "no-pid-namespace: the user namespace cannot map this user ($!)";
  } else { $namespace = "no-pid-namespace: $why" }
}
my $isolated = $namespace eq 'pid-namespace';
my $main = fork;
if (!defined $main) { print STDERR "rein watchdog: fork: $!\n"; exit 125 }
if ($main == 0) {
  exec { $ARGV[0] } @ARGV or do { print STDERR "failed to start $ARGV[0]: $!\n"; exit 127 } unless $isolated;
  # Pid 1 of the command's namespace: start the command, pass on the signals the watchdog passes, reap every orphan
  # until the command ends, hand its status to the watchdog and end — and with it, everything left in the namespace.
  close $control; close $wake_r; close $wake_w; close $ended_r;
  my $command;
  $SIG{$_} = sub { kill $_[0], $command if $command } for qw(TERM INT HUP);
  $command = fork;
  if (!defined $command) { print STDERR "rein watchdog: fork: $!\n"; exit 125 }
  if ($command == 0) { $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP); exec { $ARGV[0] } @ARGV; print STDERR "failed to start $ARGV[0]: $!\n"; exit 127 }
  while (1) {
    my $pid = waitpid(-1, 0);
    if ($pid == $command) { syswrite($ended_w, "$?\n"); exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) }
    exit 125 if $pid < 0 && $! != 4; # EINTR
  }
}
close $ended_w;
my $status;
$SIG{PIPE} = 'IGNORE';
syswrite($control, "$main $namespace\n");
my $woken = 0;
$SIG{CHLD} = sub { syswrite($wake_w, 'c') unless $woken++ };
$SIG{$_} = sub { kill $_[0], $main unless defined $status } for qw(TERM INT HUP);
sub reap { while ((my $pid = waitpid(-1, 1)) > 0) { $status = $? if $pid == $main } }
sub below {
  my (%parent, %group, %state);
  opendir(my $dir, '/proc') or return ();
  for my $pid (grep { /^\d+$/ } readdir $dir) {
    open(my $file, '<', "/proc/$pid/stat") or next;
    my $stat = <$file>;
    next unless defined $stat;
    my ($state, $parent, $group) = split / /, substr($stat, rindex($stat, ')') + 2);
    ($parent{$pid}, $group{$pid}, $state{$pid}) = ($parent, $group, $state);
  }
  my (%children, %found);
  push @{ $children{ $parent{$_} } }, $_ for keys %parent;
  my @queue = ($$);
  while (@queue) { for my $child (@{ $children{ shift @queue } || [] }) { push @queue, $child unless $found{$child}++ } }
  # Its process group too, but only one it leads (the command's own): never the group of whoever started it.
  if (getpgrp(0) == $$) { $found{$_} = 1 for grep { $group{$_} == $$ } keys %group }
  delete $found{$$};
  return grep { $state{$_} ne 'Z' } keys %found;
}
sub marked {
  return () unless defined $marker;
  my $needle = "REIN_CALL=$marker\0";
  my @found;
  opendir(my $dir, '/proc') or return ();
  for my $pid (grep { /^\d+$/ && $_ != $$ } readdir $dir) {
    open(my $file, '<', "/proc/$pid/environ") or next;
    local $/;
    my $environment = <$file>;
    next unless defined $environment;
    push @found, $pid if index($environment, $needle) == 0 || index($environment, "\0$needle") >= 0;
  }
  return @found;
}
sub sweep {
  my ($orphaned) = @_;
  for my $round (1 .. 1000) {
    my @left = (below(), $orphaned ? marked() : ());
    last unless @left;
    kill 'KILL', @left;
    select(undef, undef, undef, 0.002);
    reap();
  }
  reap();
}
my $orphaned = 0;
while (1) {
  reap();
  last if defined $status;
  my $want = '';
  vec($want, fileno($control), 1) = 1;
  vec($want, fileno($wake_r), 1) = 1;
  my $ready = select(my $got = $want, undef, undef, 1);
  next if $ready <= 0;
  if (vec($got, fileno($wake_r), 1)) { sysread($wake_r, my $drained, 512); $woken = 0 }
  if (vec($got, fileno($control), 1) && !sysread($control, my $bytes, 512)) { $orphaned = 1; last }
}
# With nothing left below it (no child of its own: every orphan would have become one) there is nothing to look for.
sub anything_left { while (1) { my $pid = waitpid(-1, 1); return $pid == 0 if $pid <= 0; $status = $? if $pid == $main } }
sweep($orphaned) if $orphaned || anything_left();
if ($isolated && defined $status) { my ($line, $ready) = ('', ''); vec($ready, fileno($ended_r), 1) = 1; sysread($ended_r, $line, 64) if select($ready, undef, undef, 1) > 0; $status = $1 if $line =~ /^(\d+)\n/ }
if (!defined $status) { waitpid($main, 0); $status = $? }
exit($status >> 8) unless $status & 127;
$SIG{$_} = 'DEFAULT' for qw(TERM INT HUP CHLD);
kill $status & 127, $$;
exit 128 + ($status & 127);
`;

/** The numbers of the `prctl` and `unshare` system calls on the architectures the watchdog knows (Perl's `syscall` takes numbers). */
const syscallNumbers: Readonly<Record<string, readonly [prctl: number, unshare: number]>> = { x64: [157, 272], arm64: [167, 97], riscv64: [167, 97], loong64: [167, 97], ia32: [172, 310], arm: [172, 337], s390x: [172, 303], ppc64: [171, 282] };

/** The watchdog found on this machine: its argv prefix, or why there is none; and whether commands get their own pid namespace. */
export interface CommandWatchdog {
  prefix: readonly string[] | null;
  reason?: string;
  /** Whether the command runs in a pid namespace of its own, where it cannot signal the watchdog; else why not. */
  pidNamespace?: { enforced: true } | { enforced: false; reason: string };
}

const probed = new Map<string, CommandWatchdog>();

/** One real trial of the watchdog (see `commandWatchdog`). */
const probeWatchdog = (): CommandWatchdog => {
  let result: CommandWatchdog;
  const numbers = syscallNumbers[process.arch];
  if (process.platform !== 'linux') result = { prefix: null, reason: 'the watchdog needs Linux' };
  else if (numbers === undefined) result = { prefix: null, reason: `the watchdog does not know the system calls of ${process.arch}` };
  else {
    const prefix = ['perl', '-e', watchdogProgram, String(numbers[0]), String(numbers[1])];
    const trial = spawnSync(prefix[0]!, [...prefix.slice(1), '/bin/sh', '-c', 'exit 7'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PERL_BADLANG: '0' }, timeout: 10_000 });
    if (trial.status === 7) {
      const said = trial.output[3]?.toString() ?? '';
      const missing = /no-pid-namespace: (.*)/.exec(said)?.[1];
      result = { prefix, pidNamespace: / pid-namespace\n/.test(said) ? { enforced: true } : { enforced: false, reason: `no pid namespace can be made here (${missing ?? 'the watchdog did not say'})` } };
    } else if (trial.error) result = { prefix: null, reason: `the watchdog cannot start (${(trial.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'perl is not installed' : trial.error.message})` };
    else result = { prefix: null, reason: `the watchdog does not work here (${trial.stderr?.toString().trim().split('\n')[0] || `exit ${trial.status}`})` };
  }
  return result;
};

/**
 * The argv prefix that runs a command under the watchdog (`perl -e <program> <prctl> <unshare> <command…>`; the spawn
 * must give it a socket on fd 3), or null with the reason where it cannot work here (not Linux, no Perl, an unknown
 * architecture, or `prctl` refused). Found once per process by running the real watchdog around `sh -c 'exit 7'`,
 * which also tells whether the command gets its own pid namespace here. Kept per user and Perl as PATH resolves it
 * now (`probeKey`).
 */
export const commandWatchdog = (): CommandWatchdog => {
  const key = probeKey(['perl']);
  const known = probed.get(key);
  if (known) return known;
  const found = probeWatchdog();
  probed.set(key, found);
  return found;
};

