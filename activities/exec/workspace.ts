/**
 * The exec workspace on the worker's disk: the turn's files written in before a run
 * (`materialiseWorkspace`) and the run's output files stored as artifacts after it (`storeOutputs`).
 */
import { promises as fs, constants as fsc } from 'node:fs';
import path from 'node:path';
import { mimeForFile } from '../../core/exec';
import { assertSafeRelPath } from '../../core/timeline/paths';
import type { ToolContext } from '../tools/types';
import type { ExecCollected, ExecSpec } from './backend';
import { chownTree } from './sandbox-files';

/** Largest output file stored as an artifact (bigger ones are file errors in the envelope). */
export const EXEC_MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;

/**
 * Writes the current turn's workspace into the work dir: `files/<rel>`, `outputs/<rel>`,
 * `attachments/<name>`, and pulled refs read-only under their historical turn roots
 * (`<turn>/files/<rel>`, `<turn>/outputs/<rel>`, `<turn>/attachments/<name>`).
 */
export async function materialiseWorkspace(ctx: ToolContext, spec: ExecSpec): Promise<void> {
  // work root, conversation dir and exec dir: traversable (not listable) by the sandbox user.
  const execDir = path.dirname(spec.workDir);
  for (const dir of [path.dirname(path.dirname(execDir)), path.dirname(execDir), execDir]) {
    await fs.mkdir(dir, { recursive: true });
    await fs.chmod(dir, 0o711);
  }
  await fs.mkdir(spec.workDir, { recursive: true });
  const prefix = `${spec.turnId}/`;
  const readOnly: string[] = [];
  for (const key of await ctx.store.listFiles(prefix)) {
    const rest = key.slice(prefix.length);
    const own = /^(files|outputs|attachments)\/(.+)$/s.exec(rest);
    const pulled = /^pulled\/([^/]+)\/(files|outputs|attachments)\/(.+)$/s.exec(rest);
    if (!own && !pulled) continue;
    const rel = own
      ? path.join(own[1]!, assertSafeRelPath(own[2]!, 'workspace file'))
      : path.join(
          assertSafeRelPath(pulled![1]!, 'pulled turn'),
          pulled![2]!,
          assertSafeRelPath(pulled![3]!, 'pulled file'),
        );
    const row = await ctx.store.readFile(key);
    const bytes = row?.bytes ?? (row?.content !== undefined ? Buffer.from(row.content, 'utf8') : undefined);
    if (bytes === undefined) continue;
    const target = path.join(spec.workDir, rel);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, bytes);
    if (pulled) readOnly.push(target);
  }
  await chownTree(spec.workDir);
  // Pulled refs: readable, not writable, by the sandbox user.
  for (const file of readOnly) {
    if (process.getuid?.() === 0) await fs.chown(file, 0, 0);
    await fs.chmod(file, 0o444);
  }
}

/** Stores each collected output as a `file` artifact at `<turn>/outputs/<path>`; returns the files it could not store. */
export async function storeOutputs(
  ctx: ToolContext,
  spec: ExecSpec,
  collected: ExecCollected,
): Promise<Array<{ path: string; reason: string }>> {
  const errors: Array<{ path: string; reason: string }> = [];
  for (const f of collected.outputFiles) {
    let rel: string;
    try {
      rel = assertSafeRelPath(f.path, 'output file');
    } catch (err) {
      errors.push({ path: f.path, reason: (err as Error).message });
      continue;
    }
    if (f.sizeBytes > EXEC_MAX_ARTIFACT_BYTES) {
      errors.push({
        path: f.path,
        reason: `${f.sizeBytes} bytes, over the ${EXEC_MAX_ARTIFACT_BYTES}-byte artifact cap`,
      });
      continue;
    }
    let bytes: Buffer;
    try {
      const handle = await fs.open(path.join(spec.outputDir, rel), fsc.O_RDONLY | fsc.O_NOFOLLOW);
      try {
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (err) {
      errors.push({ path: f.path, reason: `unreadable: ${(err as Error).message}` });
      continue;
    }
    await ctx.store.writeFile({
      key: `${spec.turnId}/outputs/${rel}`,
      turnId: spec.turnId,
      mime: mimeForFile(rel).mime,
      bytes,
      createdBy: ctx.callId,
    });
  }
  return errors;
}
