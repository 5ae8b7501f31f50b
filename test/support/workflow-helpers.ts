// A workflow server for tests, answering the emulator's step protocol (src/emulator/delivery/workflows.ts):
// /wf/steps-N runs N steps then ends; /wf/fail-at-K runs K-1 steps and fails at step K (500);
// /wf/slow-N answers each step after N ms. Step types cycle Run, Call, Sleep.
import type { Reply, RecordedRequest } from './emulator-helpers.js';

const TYPES = ['Run', 'Call', 'Sleep'] as const;

export function workflowResponder(request: RecordedRequest): Reply {
  const step = Number(request.headers['upstash-workflow-step'] ?? '1');
  const path = request.url.split('?')[0]!;
  const steps = /steps-(\d+)/.exec(path);
  const failAt = /fail-at-(\d+)/.exec(path);
  const slow = /slow-(\d+)/.exec(path);
  if (failAt && step >= Number(failAt[1])) return { status: 500, body: '{"error":"step failed"}' };
  const total = steps ? Number(steps[1]) : failAt ? Number(failAt[1]) : 2;
  const delayMs = slow ? Number(slow[1]) : 0;
  if (step > total) return { status: 200, body: '{"result":"done"}', delayMs };
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ step: { name: `step-${step}`, type: TYPES[(step - 1) % TYPES.length] } }),
    delayMs,
  };
}

export async function trigger(
  emulatorUrl: string,
  token: string,
  workflowUrl: string,
  headers: Record<string, string> = {},
): Promise<{ workflowRunId: string; workflowCreatedAt: number }> {
  const response = await fetch(`${emulatorUrl}/v2/trigger/${workflowUrl}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
    body: '{"input":1}',
  });
  if (response.status !== 200) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { workflowRunId: string; workflowCreatedAt: number };
}
