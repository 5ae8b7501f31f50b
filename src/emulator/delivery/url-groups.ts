// URL Groups (the API calls them topics): a named set of endpoints; a message to the group is
// one message per endpoint.
import { EmulatorInputError, EmulatorNotFoundError } from '../errors.js';

export interface Endpoint {
  name?: string;
  url: string;
}

export interface UrlGroup {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: Endpoint[];
}

export class UrlGroupStore {
  private readonly groups = new Map<string, UrlGroup>();

  constructor(private readonly now: () => number) {}

  get(name: string): UrlGroup | undefined {
    return this.groups.get(name);
  }

  require(name: string): UrlGroup {
    const group = this.groups.get(name);
    if (!group) throw new EmulatorNotFoundError(`url group ${name} not found`);
    return group;
  }

  /** Adds endpoints, creating the group; an endpoint with a known URL gets its name updated. */
  addEndpoints(name: string, endpoints: Endpoint[]): UrlGroup {
    const now = this.now();
    let group = this.groups.get(name);
    if (!group) {
      group = { name, createdAt: now, updatedAt: now, endpoints: [] };
      this.groups.set(name, group);
    }
    for (const endpoint of endpoints) {
      const existing = group.endpoints.find((item) => item.url === endpoint.url);
      if (existing) {
        if (endpoint.name !== undefined) existing.name = endpoint.name;
      } else {
        if (endpoint.name !== undefined && group.endpoints.some((item) => item.name === endpoint.name)) {
          throw new EmulatorInputError(
            'endpoints',
            `an endpoint named ${endpoint.name} already exists in url group ${name}`,
          );
        }
        group.endpoints.push({ ...endpoint });
      }
    }
    group.updatedAt = now;
    return group;
  }

  /** Removes the endpoints matching by name or URL; the group stays (possibly empty). */
  removeEndpoints(name: string, endpoints: Array<{ name?: string; url?: string }>): UrlGroup {
    const group = this.require(name);
    group.endpoints = group.endpoints.filter(
      (item) =>
        !endpoints.some(
          (remove) =>
            (remove.url !== undefined && remove.url === item.url) ||
            (remove.name !== undefined && remove.name === item.name),
        ),
    );
    group.updatedAt = this.now();
    return group;
  }

  delete(name: string): void {
    if (!this.groups.delete(name)) throw new EmulatorNotFoundError(`url group ${name} not found`);
  }

  list(): UrlGroup[] {
    return [...this.groups.values()];
  }

  clear(): void {
    this.groups.clear();
  }
}

export function urlGroupJson(group: UrlGroup): UrlGroup {
  return {
    name: group.name,
    createdAt: group.createdAt,
    updatedAt: group.updatedAt,
    endpoints: group.endpoints.map((endpoint) =>
      endpoint.name !== undefined ? { name: endpoint.name, url: endpoint.url } : { url: endpoint.url },
    ),
  };
}
