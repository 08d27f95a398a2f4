/**
 * Consumer-group members in a process of their own, for tests that SIGKILL a
 * member or commit synchronously. Started by `spawnMembers` with the members'
 * options as JSON in argv[2]; prints one JSON report per line on stdout (see
 * MemberReport) and closes every consumer, leaving the group, on "close" on stdin.
 */
import { createInterface } from 'node:readline';
import { GroupMember, type MemberOptions, type MemberReport } from './groups-members.js';

function report(line: MemberReport): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const options = JSON.parse(process.argv[2] ?? '[]') as MemberOptions[];
const members = await Promise.all(options.map((o) => GroupMember.start(o)));
const reportedErrors = new Map<GroupMember, number>();
for (const m of members) {
  const member = m.name;
  m.onRecords = (records) => report({ member, type: 'records', records });
  m.onRebalance = (event) => report({ member, type: 'rebalance', event, assigned: [...m.assigned].sort((a, b) => a - b) });
  m.onCommitted = (offsets) => report({ member, type: 'committed', offsets });
  reportedErrors.set(m, 0);
  report({ member, type: 'ready' });
}
const errorWatch = setInterval(() => {
  for (const m of members) {
    let n = reportedErrors.get(m)!;
    while (n < m.errors.length) report({ member: m.name, type: 'error', message: m.errors[n++]! });
    reportedErrors.set(m, n);
  }
}, 100);

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() !== 'close') return;
  await Promise.all(members.map((m) => m.close()));
  clearInterval(errorWatch);
  process.exit(0);
});
