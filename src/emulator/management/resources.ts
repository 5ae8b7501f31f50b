// Every management resource that lives in a folder of its own (./resource.ts), in mount order.
import type { ManagementResourceFactory } from './resource.js';
import { createRedisResource } from './redis/index.js';

export const MANAGEMENT_RESOURCES: readonly ManagementResourceFactory[] = [createRedisResource];
