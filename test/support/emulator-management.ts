// The emulator's management interface over real HTTP, for the emulator-management-*.test.ts
// files: a tiny express app on 127.0.0.1:0 mounts the management routers the way the emulator
// app does (root + /__emulator/management), with a fake clock so values that move with time can
// be checked against hand-worked figures.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { expect } from 'vitest';
import {
  createManagement,
  type Management,
  type ManagementApiVersion,
  type PlanProfile,
  type TrafficReader,
  type VectorStats,
} from '../../src/emulator/management/index.js';

export const EMAIL = 'ops@example.com';
export const API_KEY = 'mgmt-key-3f9a';
export const DELIVERY_TOKEN = 'qstash-token-77c1';
/** Wednesday 18 March 2026, 10:30:15.123 UTC. */
export const START = Date.UTC(2026, 2, 18, 10, 30, 15, 123);
export const MINUTE = 60_000;
export const DAY = 86_400_000;

export const TIME_TEXT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? \+0000 UTC$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface ManagementHarness {
  url: string;
  management: Management;
  clock: { now: number };
  /** The `managementApi` knob the app would hold. */
  apiVersion: { value: ManagementApiVersion };
  get: <T>(path: string, auth?: string | null) => Promise<{ status: number; body: T }>;
  admin: <T>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;
}

const servers: Server[] = [];

/** Closes every server startManagement() opened; each test file runs it after each test. */
export async function stopManagementServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export async function startManagement(
  plan: PlanProfile = 'fixed',
  traffic?: TrafficReader,
): Promise<ManagementHarness> {
  const clock = { now: START };
  const apiVersion: ManagementHarness['apiVersion'] = { value: 'current' };
  const management = createManagement({
    email: EMAIL,
    apiKey: API_KEY,
    deliveryToken: DELIVERY_TOKEN,
    plan,
    now: () => clock.now,
    serviceNames: ['qstash', 'svc'],
    apiVersion: () => apiVersion.value,
    ...(traffic ? { traffic } : {}),
  });
  const app = express();
  app.use('/__emulator/management', management.adminRouter);
  app.use(management.router);
  // Stands for the delivery routes the real app mounts behind the management router.
  app.use((_req, res) => {
    res.status(404).json({ from: 'app' });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async <T>(path: string, auth: string | null = basic(EMAIL, API_KEY)) => {
    const res = await fetch(`${url}${path}`, { headers: auth === null ? {} : { authorization: auth } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__emulator/management${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  return { url, management, clock, apiVersion, get, admin };
}

export function parseTime(text: string): { ms: number; fraction: string | undefined } {
  const match = TIME_TEXT.exec(text);
  if (!match) throw new Error(`not a service timestamp: ${text}`);
  const [, y, mo, d, h, mi, s, fraction] = match;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return { ms: ms + (fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0), fraction };
}

export function expectTypes(record: object, types: Record<string, 'string' | 'integer' | 'number' | 'boolean'>): void {
  for (const [field, type] of Object.entries(types)) {
    const value = (record as Record<string, unknown>)[field];
    if (type === 'integer') expect(Number.isInteger(value), `${field} is an integer`).toBe(true);
    else expect(typeof value, `${field} is a ${type}`).toBe(type);
  }
}

/** The limits search and vector indexes both carry. */
export const INDEX_LIMIT_FIELDS = {
  max_vector_count: 'integer',
  max_monthly_reranks: 'integer',
  max_daily_updates: 'integer',
  max_daily_queries: 'integer',
  max_monthly_bandwidth: 'integer',
  max_writes_per_second: 'integer',
  max_query_per_second: 'integer',
  max_reads_per_request: 'integer',
  max_writes_per_request: 'integer',
} as const;

/** Limits the docs give as -1 (unlimited) on paid indexes. */
export const LIMITS_UNLIMITED_IN_DOCS = [
  'max_monthly_reranks',
  'max_daily_updates',
  'max_daily_queries',
  'max_monthly_bandwidth',
];

export async function statsOf(h: ManagementHarness, id: string, period?: string): Promise<VectorStats> {
  const query = period === undefined ? '' : `?period=${period}`;
  const { status, body } = await h.get<VectorStats>(`/v2/vector/index/${id}/stats${query}`);
  expect(status).toBe(200);
  return body;
}
