// Every relative link of the documentation resolves: the file exists and, when the link names
// an anchor in a Markdown file, a heading of that file has it (GitHub's slugs). External links
// (http, https, mailto) are not fetched: the tests run on loopback only.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md'].map((name) => join(ROOT, name)).filter((path) => existsSync(path));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  for (const dir of ['docs', 'src', 'deploy', 'dashboards', 'mixin', 'bench']) {
    if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  }
  return files.filter((path) => !path.includes('/vendor/'));
}

/** Text outside fenced code blocks and inline code, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function relativeLinks(text: string): string[] {
  const links: string[] = [];
  for (const match of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push(target);
  }
  return links;
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const link of relativeLinks(readFileSync(file, 'utf8'))) {
    const [pathPart, anchor] = link.split('#', 2) as [string, string | undefined];
    const target = pathPart === '' ? file : resolve(dirname(file), decodeURI(pathPart));
    if (!existsSync(target)) {
      broken.push(`${link} (no such file)`);
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && !headingAnchors(readFileSync(target, 'utf8')).has(anchor)) {
      broken.push(`${link} (no heading with that anchor)`);
    }
  }
  return broken;
}

describe('documentation links', () => {
  it('finds the documents to check', () => {
    const files = markdownFiles().map((path) => relative(ROOT, path));
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/performance.md']));
  });

  it('makes anchors as GitHub does', () => {
    expect([
      ...headingAnchors('# The landing page (`/`)\n## TLS and basic auth: the web config file\n## Soak\n## Soak\n'),
    ]).toEqual(['the-landing-page-', 'tls-and-basic-auth-the-web-config-file', 'soak', 'soak-1']);
  });

  it.each(markdownFiles().map((path) => [relative(ROOT, path), path]))(
    '%s: every relative link resolves',
    (_name, path) => {
      expect(brokenLinks(path)).toEqual([]);
    },
  );
});
