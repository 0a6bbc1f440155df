// Every file of the checkout the reconciler reads (manifests, migration files, function
// sources, what a document names as a file) comes through one walker,
// src/manifests/checkout-files.ts, which refuses paths and links that leave the checkout and
// records what it hands out for the revision. No other module of src imports a file-reading or
// directory-listing function of node:fs, the bounded reader or the tree lister, unless it is on
// the list below with the files it reads, none of them a checkout's. The check is shown to fail
// on a deliberate violation.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(new URL('../../src', import.meta.url).pathname);

/** Modules that read files, each with what it reads: never a file of the checkout. */
const READS_ELSEWHERE: Readonly<Record<string, string>> = {
  'manifests/checkout-files.ts': 'the walker itself',
  'manifests/walk-tree.ts': 'the directory lister the walker is built on (it opens no file)',
  'manifests/bounded-read.ts': 'the bounded reader the walker and the credential readers share',
  'manifests/ignore-rules.ts': "the ignore files that tell the walker what to leave out (the repository's .gitignore above the checkout included); their text is never quoted",
  'manifests/refs.ts': "secret files named by `valueFrom.file`: the reference policy's rules (reference-policy.ts), not the checkout's",
  'manifests/revision.ts': "the repository's HEAD and branch ref files: only a commit id is taken from them, anything else is left to git",
  'manifests/schema-validator.ts': 'the committed JSON schemas of the package',
  'api/token-file.ts': 'the token file (credential-paths.ts refuses one inside the checkout)',
  'api/oauth-token.ts': 'the OAuth refresh token file (refused inside the checkout)',
  'api/generate/generate-api.ts': "the build's copy of the API specification",
  'tools/generate-schemas.ts': "the build's copy of the API specification",
  'cli/version.ts': "the package's package.json",
  'cli/commands/daemon-post.ts': 'the trigger token file named by a flag',
  'cli/commands/status.ts': 'the status token file named by a flag',
  'cli/state-dir.ts': 'the state directory, and the one a working directory held before it followed the manifests directory',
  'cli/commands/export.ts': "the export's own output directory, listed before it is written",
  'daemon/freshness-file.ts': 'the state directory',
  'daemon/trigger.ts': 'the trigger and webhook secret files (refused inside the checkout)',
  'notify/config.ts': 'the notification configuration and its secret files, and the package schema',
  'reconcile/export.ts': 'the committed JSON schemas of the package',
  'reconcile/plan-file.ts': 'a saved plan file and the package schema',
  'shards/shard-map.ts': 'the shard map named by --shards (in the checkout, discovery has already read it through the walker, refusing a link that leaves)',
  'util/atomic-file.ts': 'the state directory',
  'util/state-fence.ts': 'the state directory',
  'util/state-lock.ts': 'the state directory',
};

/** Layers that are not the reconciler: the emulator, the bench and the chaos suite. */
const NOT_THE_RECONCILER = ['emulator/', 'bench/', 'chaos/'];

const READING = /\b(readFile|readFileSync|open|openSync|openAsBlob|createReadStream|readdir|readdirSync|opendir|opendirSync|read|readSync|readv|readvSync)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** What a module's text imports that reads files: node:fs readers, the bounded reader, the tree lister. */
function fileReaders(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'node:fs(?:\/promises)?'/g)) {
    if (/^\s*import\s+type/.test(match[0])) continue;
    for (const name of match[1]!.split(',')) {
      const bare = name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!;
      if (READING.test(bare) && !name.trim().startsWith('type ')) found.add(bare);
    }
  }
  if (/import\s+(?:\*\s+as\s+\w+|\w+)\s+from\s*'node:fs(?:\/promises)?'/.test(text)) found.add('node:fs (whole module)');
  for (const match of text.matchAll(/from\s*'[./]*(?:manifests\/)?(bounded-read|walk-tree)\.js'/g)) found.add(match[1]!);
  return [...found].sort();
}

function offenders(root: string, allowed: Readonly<Record<string, string>>): string[] {
  return sourceFiles(root)
    .map((file) => relative(root, file))
    .filter((file) => !NOT_THE_RECONCILER.some((prefix) => file.startsWith(prefix)) && !(file in allowed))
    .flatMap((file) => {
      const readers = fileReaders(readFileSync(join(root, file), 'utf8'));
      return readers.length > 0 ? [`${file}: ${readers.join(', ')}`] : [];
    });
}

describe('every file of the checkout is read through the walker', () => {
  it('no module of src but the listed ones imports a function that reads or lists files', () => {
    expect(offenders(SRC, READS_ELSEWHERE)).toEqual([]);
  });

  it('the list names only modules that exist and still read files (it only shrinks)', () => {
    const stale = Object.keys(READS_ELSEWHERE).filter((file) => {
      try {
        return fileReaders(readFileSync(join(SRC, file), 'utf8')).length === 0;
      } catch {
        return true;
      }
    });
    expect(stale).toEqual([]);
  });

  it('the readers of the checkout use the walker (the scan is not vacuous)', () => {
    for (const file of ['manifests/load.ts', 'manifests/migrations.ts', 'manifests/discover.ts', 'reconcile/kinds/function-sources.ts', 'daemon/change-set.ts']) {
      expect(readFileSync(join(SRC, file), 'utf8'), file).toMatch(/checkout-files\.js'/);
    }
  });

  it('fails on a deliberate violation: a kind that opens a file itself, or lists a directory', () => {
    expect(fileReaders("import { readFileSync, statSync } from 'node:fs';\n")).toEqual(['readFileSync']);
    expect(fileReaders("import {\n  open,\n  realpath,\n} from 'node:fs/promises';\n")).toEqual(['open']);
    expect(fileReaders("import { readdir as list } from 'node:fs/promises';\n")).toEqual(['readdir']);
    expect(fileReaders("import * as fs from 'node:fs';\n")).toEqual(['node:fs (whole module)']);
    expect(fileReaders("import { readBoundedFile } from '../../manifests/bounded-read.js';\n")).toEqual(['bounded-read']);
    expect(fileReaders("import { walkTree } from '../manifests/walk-tree.js';\n")).toEqual(['walk-tree']);
    expect(fileReaders("import { realpathSync, statSync } from 'node:fs';\nimport type { Stats } from 'node:fs';\n")).toEqual([]);
  });
});
