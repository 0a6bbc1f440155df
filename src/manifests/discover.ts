// Finds the manifest files of a tree: every *.yaml / *.yml, leaving out dot-files and
// dot-directories (.git, .github, ...) and what the ignore rules leave out (ignore-rules.ts).
// A tree that cannot be read whole is a problem of the set, never a smaller set.
import { MAX_FILES } from './limits.js';
import { IgnoreRules } from './ignore-rules.js';
import { CheckoutFiles, TreeWalkError } from './checkout-files.js';

export { IGNORE_FILE } from './ignore-rules.js';

const MANIFEST_FILE = /\.ya?ml$/i;

/** A problem with the tree itself, located at a path relative to the root. */
interface DiscoveryProblem {
  file: string;
  message: string;
}

interface Discovered {
  files: string[];
  /** Problems with the tree itself: any one makes the whole set invalid. */
  problems: DiscoveryProblem[];
}

const INCOMPLETE = 'the manifest set would be incomplete, so nothing is planned or applied';

function walkMessage(error: TreeWalkError): string {
  if (error.problem === 'outside-link') {
    return `\`${error.path}\` is a symbolic link that leaves the manifests directory (list it in .reconcileignore to leave it out): ${INCOMPLETE}`;
  }
  return `${error.message}: ${INCOMPLETE}`;
}

/** Manifest files below `root` (already resolved), as sorted paths relative to it with `/` separators. */
export async function discoverManifestFiles(root: string): Promise<Discovered> {
  const rules = new IgnoreRules(root);
  const problems: DiscoveryProblem[] = [];
  let files: string[] = [];
  try {
    const walked = await CheckoutFiles.resolved(root).walk(root, {
      ignore: (path, isDirectory) => rules.ignores(path, isDirectory),
      enterDirectory: (path) => rules.enterDirectory(path),
      accept: (path) => MANIFEST_FILE.test(path),
      maxFiles: MAX_FILES,
      // Only the paths are kept: no status of each file.
      statFiles: false,
    });
    files = walked.files.map((file) => file.path);
    if (walked.truncated) problems.push({ file: '.', message: `more than ${MAX_FILES} manifest files: the rest are not read` });
  } catch (error) {
    if (!(error instanceof TreeWalkError)) throw error;
    problems.push({ file: error.path, message: walkMessage(error) });
  }
  // An ignore file that cannot be read leaves what the set holds unknown (one inside a directory
  // already named as unreadable is that same problem: named once).
  const named = problems.map((problem) => problem.file);
  problems.push(...rules.problems.filter((problem) => !named.some((file) => problem.file.startsWith(`${file}/`))));
  return { files: files.sort(), problems };
}
