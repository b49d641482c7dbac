import { spawnSync } from 'node:child_process';

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
 * the command (a soft timeout, or a `kill <pid>`). It writes the command's pid to the socket, a line, once.
 */
const watchdogProgram = String.raw`
use strict;
my $nr = shift @ARGV;
if (syscall($nr, 36, 1, 0, 0, 0) != 0) { print STDERR "rein watchdog: cannot become a subreaper: $!\n"; exit 125 }
delete $ENV{PERL_BADLANG};
my $marker = $ENV{REIN_CALL};
open(my $control, '+<&=', 3) or do { print STDERR "rein watchdog: no control socket: $!\n"; exit 125 };
fcntl($control, 2, 1);
pipe(my $wake_r, my $wake_w) or do { print STDERR "rein watchdog: pipe: $!\n"; exit 125 };
my $main = fork;
if (!defined $main) { print STDERR "rein watchdog: fork: $!\n"; exit 125 }
if ($main == 0) { exec { $ARGV[0] } @ARGV; print STDERR "failed to start $ARGV[0]: $!\n"; exit 127 }
my $status;
$SIG{PIPE} = 'IGNORE';
syswrite($control, "$main\n");
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
if (!defined $status) { waitpid($main, 0); $status = $? }
exit($status >> 8) unless $status & 127;
$SIG{$_} = 'DEFAULT' for qw(TERM INT HUP CHLD);
kill $status & 127, $$;
exit 128 + ($status & 127);
`;

/** The number of the `prctl` system call on the architectures the watchdog knows (Perl's `syscall` takes numbers). */
const prctlNumbers: Readonly<Record<string, number>> = { x64: 157, arm64: 167, riscv64: 167, loong64: 167, ia32: 172, arm: 172, s390x: 172, ppc64: 171 };

let probed: { prefix: readonly string[] | null; reason?: string } | undefined;

/**
 * The argv prefix that runs a command under the watchdog (`perl -e <program> <prctl number> <command…>`; the spawn
 * must give it a socket on fd 3), or null with the reason where it cannot work here (not Linux, no Perl, an unknown
 * architecture, or `prctl` refused). Found once per process by running the real watchdog around `sh -c 'exit 7'`.
 */
export const commandWatchdog = (): { prefix: readonly string[] | null; reason?: string } => {
  if (probed) return probed;
  const number = prctlNumbers[process.arch];
  if (process.platform !== 'linux') probed = { prefix: null, reason: 'the watchdog needs Linux' };
  else if (number === undefined) probed = { prefix: null, reason: `the watchdog does not know the prctl system call of ${process.arch}` };
  else {
    const prefix = ['perl', '-e', watchdogProgram, String(number)];
    const trial = spawnSync(prefix[0]!, [...prefix.slice(1), '/bin/sh', '-c', 'exit 7'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PERL_BADLANG: '0' }, timeout: 10_000 });
    if (trial.status === 7) probed = { prefix };
    else if (trial.error) probed = { prefix: null, reason: `the watchdog cannot start (${(trial.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'perl is not installed' : trial.error.message})` };
    else probed = { prefix: null, reason: `the watchdog does not work here (${trial.stderr?.toString().trim().split('\n')[0] || `exit ${trial.status}`})` };
  }
  return probed;
};
