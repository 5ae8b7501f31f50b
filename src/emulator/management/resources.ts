// Every resource of the management API, each a folder of its own (./resource.ts), by name, in
// mount order: the one list a new product is registered in.
import type { ManagementResourceContext, ManagementResourceFactory } from './resource.js';
import { createRedisResource } from './redis/index.js';
import { createSearchResource } from './search/index.js';
import { createVectorResource } from './vector/index.js';

export const MANAGEMENT_RESOURCES = {
  search: createSearchResource,
  vector: createVectorResource,
  redis: createRedisResource,
} as const satisfies Record<string, ManagementResourceFactory>;

/** Each resource as its factory builds it, by name: with its own in-process operations. */
export type ManagementResources = {
  readonly [Name in keyof typeof MANAGEMENT_RESOURCES]: ReturnType<(typeof MANAGEMENT_RESOURCES)[Name]>;
};

type Intersection<Union> = (Union extends unknown ? (part: Union) => void : never) extends (all: infer All) => void
  ? All
  : never;

/** The fields every resource adds to the admin GET /state answer. */
export type ResourceSnapshots = Intersection<ReturnType<ManagementResources[keyof ManagementResources]['snapshot']>>;

export function createResources(context: ManagementResourceContext): ManagementResources {
  return Object.fromEntries(
    Object.entries(MANAGEMENT_RESOURCES).map(([name, create]) => [name, create(context)]),
  ) as unknown as ManagementResources;
}
