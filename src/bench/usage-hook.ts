// Loaded with `node --import` into a process the bench starts: when the process exits, writes
// its own CPU time (process.resourceUsage) and peak resident memory (peak-rss.ts) to BENCH_USAGE_FILE.
import { writeFileSync } from 'node:fs';
import { peakRssMb } from './peak-rss.js';

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({
        userSeconds: usage.userCPUTime / 1e6,
        systemSeconds: usage.systemCPUTime / 1e6,
        cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
        peakRssMb: peakRssMb(),
        uptimeSeconds: process.uptime(),
      }),
    );
  });
}
