/**
 * The seccomp filter bubblewrap loads for a sandboxed command (`--seccomp <fd>`): a classic BPF program that refuses a
 * short list of system calls with `EPERM` and allows every other one.
 *
 * The list holds what neither the missing capabilities nor the command's own uid refuse, or what reaches state the
 * sandbox's namespaces do not separate: the kernel keyrings (a command inherits rein's session keyring and would read
 * and change it: `keyctl`, `add_key`, `request_key`), the kernel log (`syslog`), and — refused by the missing
 * capabilities already, listed so a kernel bug in a capability check is not enough — loading and removing modules,
 * `kexec`, `bpf`, `perf_event_open`, `userfaultfd`, `open_by_handle_at`, `acct`, swap and `reboot`. Everything else is
 * allowed: a command is an ordinary program (a compiler, a test runner, a browser).
 */

/** The system calls the filter refuses, by name (`rein sandbox` lists them). */
export const refusedSyscalls: readonly string[] = Object.freeze(['keyctl', 'add_key', 'request_key', 'syslog', 'init_module', 'finit_module', 'delete_module', 'kexec_load', 'kexec_file_load', 'bpf', 'perf_event_open', 'userfaultfd', 'open_by_handle_at', 'acct', 'swapon', 'swapoff', 'reboot']);

type SyscallTable = Readonly<Record<string, number>>;

/** x86_64 (`asm/unistd_64.h`). */
const x64: SyscallTable = { keyctl: 250, add_key: 248, request_key: 249, syslog: 103, init_module: 175, finit_module: 313, delete_module: 176, kexec_load: 246, kexec_file_load: 320, bpf: 321, perf_event_open: 298, userfaultfd: 323, open_by_handle_at: 304, acct: 163, swapon: 167, swapoff: 168, reboot: 169 };
/** i386, the compat ABI of x86_64 (`asm/unistd_32.h`; it has no `kexec_file_load`). */
const i386: SyscallTable = { keyctl: 288, add_key: 286, request_key: 287, syslog: 103, init_module: 128, finit_module: 350, delete_module: 129, kexec_load: 283, bpf: 357, perf_event_open: 336, userfaultfd: 374, open_by_handle_at: 342, acct: 51, swapon: 87, swapoff: 115, reboot: 88 };
/** The generic table (`asm-generic/unistd.h`) of arm64, riscv64 and loongarch64. */
const generic: SyscallTable = { keyctl: 219, add_key: 217, request_key: 218, syslog: 116, init_module: 105, finit_module: 273, delete_module: 106, kexec_load: 104, kexec_file_load: 294, bpf: 280, perf_event_open: 241, userfaultfd: 282, open_by_handle_at: 265, acct: 89, swapon: 224, swapoff: 225, reboot: 142 };

/** One ABI a process of this architecture may use: its `AUDIT_ARCH_*` value and numbers. */
interface Abi {
  audit: number;
  table: SyscallTable;
  /** x86_64: numbers from here up are the x32 ABI, refused as a whole. */
  x32Base?: number;
}

/** The ABIs per Node architecture name: the native one first. An ABI not listed is refused as a whole. */
export const seccompAbis: Readonly<Record<string, readonly Abi[]>> = {
  x64: [{ audit: 0xc000003e, table: x64, x32Base: 0x40000000 }, { audit: 0x40000003, table: i386 }],
  arm64: [{ audit: 0xc00000b7, table: generic }],
  riscv64: [{ audit: 0xc00000f3, table: generic }],
  loong64: [{ audit: 0xc0000102, table: generic }],
};

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const loadWord = 0x20; // BPF_LD | BPF_W | BPF_ABS
const jumpEqual = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const jumpGreaterEqual = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const returnConstant = 0x06; // BPF_RET | BPF_K
const allow = 0x7fff0000; // SECCOMP_RET_ALLOW
const refuse = 0x00050000 | 1; // SECCOMP_RET_ERRNO | EPERM
const archOffset = 4; // struct seccomp_data: int nr; __u32 arch; …
const numberOffset = 0;

/** One `struct sock_filter` instruction. */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/**
 * The filter as instructions: per ABI, if the architecture matches, refuse the listed numbers (and x32) and allow the
 * rest; a process on an ABI not listed (32-bit ARM on arm64) is refused every call. Null for an architecture rein has
 * no table for.
 */
export const seccompInstructions = (arch: string = process.arch): BpfInstruction[] | null => {
  const abis = seccompAbis[arch];
  if (!abis) return null;
  const program: BpfInstruction[] = [];
  for (const abi of abis) {
    const numbers = refusedSyscalls.flatMap((name) => (abi.table[name] === undefined ? [] : [abi.table[name]!]));
    const body: BpfInstruction[] = [{ code: loadWord, jt: 0, jf: 0, k: numberOffset }];
    if (abi.x32Base !== undefined) body.push({ code: jumpGreaterEqual, jt: numbers.length + 1, jf: 0, k: abi.x32Base });
    // Each test jumps to the refusal after the last test when it matches; the instruction after the tests allows.
    numbers.forEach((number, index) => body.push({ code: jumpEqual, jt: numbers.length - index, jf: 0, k: number }));
    body.push({ code: returnConstant, jt: 0, jf: 0, k: allow }, { code: returnConstant, jt: 0, jf: 0, k: refuse });
    program.push({ code: loadWord, jt: 0, jf: 0, k: archOffset }, { code: jumpEqual, jt: 0, jf: body.length, k: abi.audit }, ...body);
  }
  program.push({ code: returnConstant, jt: 0, jf: 0, k: refuse });
  return program;
};

/** The filter as the bytes bubblewrap reads (`struct sock_filter[]`, this machine's byte order: little-endian here). */
export const seccompProgram = (arch: string = process.arch): Buffer | null => {
  const instructions = seccompInstructions(arch);
  if (!instructions) return null;
  const bytes = Buffer.alloc(instructions.length * 8);
  instructions.forEach((instruction, index) => {
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(instruction.jt, index * 8 + 2);
    bytes.writeUInt8(instruction.jf, index * 8 + 3);
    bytes.writeUInt32LE(instruction.k, index * 8 + 4);
  });
  return bytes;
};
