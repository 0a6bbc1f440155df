// The peak resident memory of this process since it started its program, in MB. Linux keeps
// `ru_maxrss` (process.resourceUsage().maxRSS) across execve: a child the bench spawns starts
// with the bench's own peak, so a child's figure would be the larger of the two. The kernel's
// high-water mark of the process's own address space (VmHWM, made anew by execve) is not.
import { readFileSync } from 'node:fs';

export function peakRssMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]) / 1024;
  } catch {
    // Not Linux: ru_maxrss, which other systems do not carry across exec.
  }
  return process.resourceUsage().maxRSS / 1024;
}
