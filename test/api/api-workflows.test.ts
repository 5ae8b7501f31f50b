// The workflow logs page schema (lenient) and the client's request, the latter against the
// emulator over HTTP: unknown fields pass, null reads as absent, an empty cursor is none, a wrong
// type is schema drift naming the field path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { ApiSchemaDriftError } from '../../src/api/errors.js';
import { parseWith } from '../../src/api/schemas/common.js';
import { workflowLogsPageSchema } from '../../src/api/schemas/workflows.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import { trigger, workflowResponder } from '../support/workflow-helpers.js';

const context = { api: 'qstash' as const, endpoint: '/v2/workflows/logs', method: 'GET' };

describe('workflow logs page schema', () => {
  it('is lenient: unknown fields, nulls, an empty or numeric cursor, unknown states', () => {
    const page = parseWith(
      workflowLogsPageSchema,
      {
        cursor: '',
        extra: 1,
        runs: [
          {
            workflowRunId: 'wfr_1',
            workflowState: 'RUN_PAUSED',
            workflowRunCreatedAt: '1700000000000',
            workflowRunCompletedAt: null,
            steps: null,
            newField: {},
          },
          {
            workflowRunId: 'wfr_2',
            workflowState: 'RUN_SUCCESS',
            workflowRunCreatedAt: 1,
            steps: [
              { type: 'parallel', steps: [{ stepType: 'Call', state: 'STEP_SUCCESS', createdAt: 2, out: null }] },
            ],
          },
        ],
      },
      context,
    );
    expect(page.cursor).toBeUndefined();
    expect(page.runs[0]!.workflowRunCreatedAt).toBe(1_700_000_000_000);
    expect(page.runs[0]!.steps).toBeUndefined();
    expect(parseWith(workflowLogsPageSchema, { cursor: 12, runs: null }, context)).toEqual({ cursor: '12', runs: [] });
  });

  it('names the field of a wrong type', () => {
    expect(() =>
      parseWith(
        workflowLogsPageSchema,
        {
          runs: [
            {
              workflowRunId: 'x',
              workflowState: 'RUN_STARTED',
              workflowRunCreatedAt: 1,
              steps: [{ steps: [{ createdAt: 'soon' }] }],
            },
          ],
        },
        context,
      ),
    ).toThrow(ApiSchemaDriftError);
    let caught: unknown;
    try {
      parseWith(
        workflowLogsPageSchema,
        { runs: [{ workflowRunId: 7, workflowState: 'RUN_STARTED', workflowRunCreatedAt: 1 }] },
        context,
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiSchemaDriftError);
    expect((caught as ApiSchemaDriftError).path).toBe('runs[0].workflowRunId');
  });

  it('refuses the flat event shape (no runs) as drift at runs, instead of counting nothing', () => {
    let caught: unknown;
    try {
      parseWith(
        workflowLogsPageSchema,
        { cursor: 'x', events: [{ time: 1, state: 'RUN_STARTED', workflowRunId: 'wfr_1' }] },
        context,
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiSchemaDriftError);
    expect((caught as ApiSchemaDriftError).path).toBe('runs');
    expect(parseWith(workflowLogsPageSchema, {}, context)).toEqual({ runs: [] });
  });
});

describe('DeliveryClient.workflowLogsPage', () => {
  let emu: EmulatorHandle;
  let server: Destination;
  let client: DeliveryClient;
  beforeAll(async () => {
    emu = await createEmulator({ knobs: { timeScale: 100 } });
    server = await startDestination(workflowResponder);
    client = new DeliveryClient({ baseUrl: emu.url, token: emu.credentials.token });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await emu.close();
  });

  it('reads pages by cursor and asks for given runs', async () => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await trigger(emu.url, emu.credentials.token, `${server.url}/wf/steps-2`));
    await waitFor(() => emu.workflowGroundTruth().inProgress === 0, 5000, 'runs to end');
    const first = await client.workflowLogsPage({ count: 2 });
    expect(first.runs).toHaveLength(2);
    const second = await client.workflowLogsPage({ count: 2, cursor: first.cursor! });
    expect(second.cursor).toBeUndefined();
    expect([...first.runs, ...second.runs].map((run) => run.workflowRunId)).toEqual(
      runs.map((run) => run.workflowRunId).reverse(),
    );
    const asked = await client.workflowLogsPage({
      runs: [{ id: runs[1]!.workflowRunId, createdAt: runs[1]!.workflowCreatedAt }],
    });
    expect(asked.runs.map((run) => run.workflowRunId)).toEqual([runs[1]!.workflowRunId]);
    expect(asked.runs[0]!.steps!.flatMap((group) => group.steps ?? []).map((step) => step.state)).toEqual([
      'STEP_SUCCESS',
      'STEP_SUCCESS',
    ]);
  });
});
