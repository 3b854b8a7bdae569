/** One fenced code block of a Markdown file. */
export interface FencedBlock {
  /** The info string's first word (`sh`, `json`, …), lower-case; empty when the fence names none. */
  language: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The lines between the fences, without the fence's own indentation. */
  text: string;
  /** The reason given by `<!-- not run: <reason> -->` on the line just before the opening fence. */
  notRun?: string;
  /** Only blank lines lie between this block's closing fence and the next block's opening one. */
  followsDirectly: boolean;
}

/** An `sh` block that the docs test executes, with the `json` answer shown right after it, if any. */
export interface RunBlock {
  line: number;
  script: string;
  answer?: { line: number; text: string };
}

const OPENING = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/;
const NOT_RUN = /^<!--\s*not run:\s*(\S.*?)\s*-->$/;

/** Every fenced block of a Markdown text, in order (CommonMark fences: three or more backticks or tildes). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  let lastClose = -2;
  for (let index = 0; index < lines.length; index++) {
    const opening = OPENING.exec(lines[index]!);
    if (!opening) continue;
    const [, indent = '', fence = '', info = ''] = opening;
    const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let end = index + 1;
    for (; end < lines.length && !closing.test(lines[end]!); end++) {
      const line = lines[end]!;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const before = index > 0 ? lines[index - 1]!.trim() : '';
    const notRun = NOT_RUN.exec(before)?.[1];
    const between = lines.slice(lastClose + 1, index);
    blocks.push({
      language: info.toLowerCase(),
      line: index + 1,
      text: body.join('\n'),
      ...(notRun === undefined ? {} : { notRun }),
      followsDirectly: lastClose >= 0 && between.every((line) => line.trim() === ''),
    });
    lastClose = end;
    index = end;
  }
  return blocks;
}

/** The `sh` blocks to execute, each with the `json` block that directly follows it as its documented answer. */
export function runBlocks(markdown: string): RunBlock[] {
  const blocks = fencedBlocks(markdown);
  const runs: RunBlock[] = [];
  blocks.forEach((block, index) => {
    if (block.language !== 'sh' || block.notRun !== undefined) return;
    const next = blocks[index + 1];
    runs.push({
      line: block.line,
      script: block.text,
      ...(next && next.language === 'json' && next.followsDirectly
        ? { answer: { line: next.line, text: next.text } }
        : {}),
    });
  });
  return runs;
}
