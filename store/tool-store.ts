/**
 * What a tool may read and write in Postgres, bound to the call's conversation: its timeline,
 * its workspace files, its sources pool and hide overlays. Tools get this narrow interface
 * instead of a database pool (`ToolContext.store`); `pgToolStore` implements it over the stores.
 */
import type { Pool } from 'pg';
import type { Block } from '../core/timeline/block';
import type { SourceRow } from '../core/timeline/sources';
import {
  appendBlocks,
  FILE_ARTIFACT_KIND,
  getArtifact,
  listArtifacts,
  loadBlocks,
  overlayBlockIds,
  putArtifact,
  setOverlays,
  type ArtifactRow,
} from './timeline-store';
import { type ArtifactListing } from './artifact-store';
import { lexicalMemorySearch, memoryByTime, type MemoryIndex } from './memory-store';
import { semanticMemorySearch } from './memory-vectors';
import { pgvectorMemorySearch, pgvectorSchema } from './memory-pgvector';
import { checkoutFiles, pullFiles, type FileCopy } from './workspace-store';
import { loadSourcesPool, mergeToolSources, type ToolSourcesMerge } from './sources-store';
import { recordExecUsage, type ExecUsageRow } from './usage-store';

export type WorkspaceFile = Omit<ArtifactRow, 'kind'>;

export interface Overlay {
  blockId: string;
  hidden: boolean;
  replacementText?: string;
  reason: string;
}

export interface ToolStore {
  /** The conversation's blocks in append order, overlays applied. */
  blocks(): Promise<Block[]>;
  /** The conversation's sources pool in SID order. */
  sourcesPool(): Promise<SourceRow[]>;
  /** A workspace file by key (undefined when absent). */
  readFile(key: string): Promise<(WorkspaceFile & { sizeBytes: number; sha256?: string }) | undefined>;
  /** Writes a workspace file; `once` keeps an existing one (idempotent retries). True when written. */
  writeFile(file: WorkspaceFile & { key: string }, mode?: 'once' | 'upsert'): Promise<boolean>;
  /** Ids of the blocks an overlay with this reason covers. */
  overlaidBlockIds(reason: string): Promise<string[]>;
  /** Sets overlays, all or none. */
  setOverlays(overlays: Overlay[]): Promise<void>;
  /** Keys of the workspace files whose key starts with `prefix` (e.g. `<turn>/`). */
  listFiles(prefix: string): Promise<string[]>;
  /** Workspace files under `prefix` with size, hash and payload (provenance), oldest first. */
  fileEntries(prefix: string): Promise<ArtifactListing[]>;
  /** Builds the turn's files/ tree from historical files (replace or overlay), in one transaction. */
  checkout(
    turnId: string,
    mode: 'replace' | 'overlay',
    copies: FileCopy[],
    createdBy: string,
  ): Promise<{ removed: number }>;
  /** Records read-only pulled copies of historical files beside the turn's workspace. */
  pull(turnId: string, copies: FileCopy[], createdBy: string): Promise<void>;
  /** Appends blocks (idempotent on their deterministic ids), e.g. tool calls proxied from an exec sandbox. */
  appendBlocks(blocks: Block[]): Promise<void>;
  /** Merges a tool's web rows into the sources pool; the text's tool-local SIDs become pool SIDs. */
  mergeSources(rows: unknown[], text: string, turnId: string): Promise<ToolSourcesMerge>;
  /** The conversation's memory index (react.memsearch). */
  memory: MemoryIndex;
  /** Records a sandbox's billed resources (vCPU- and GB-seconds, cost) in the usage ledger, once per exec. */
  recordExecUsage(row: Omit<ExecUsageRow, 'conversationId'>): Promise<void>;
}

export function pgToolStore(db: Pool, conversationId: string): ToolStore {
  return {
    blocks: () => loadBlocks(db, conversationId),
    sourcesPool: () => loadSourcesPool(db, conversationId),
    readFile: async (key) => {
      const art = await getArtifact(db, conversationId, FILE_ARTIFACT_KIND, key);
      if (!art) return undefined;
      const { kind: _kind, ...file } = art;
      return file;
    },
    writeFile: (file, mode) => putArtifact(db, conversationId, { ...file, kind: FILE_ARTIFACT_KIND }, mode),
    overlaidBlockIds: (reason) => overlayBlockIds(db, conversationId, reason),
    setOverlays: (overlays) => setOverlays(db, conversationId, overlays),
    listFiles: async (prefix) =>
      (await listArtifacts(db, conversationId, FILE_ARTIFACT_KIND, prefix)).map((a) => a.key),
    fileEntries: (prefix) => listArtifacts(db, conversationId, FILE_ARTIFACT_KIND, prefix),
    checkout: (turnId, mode, copies, createdBy) => checkoutFiles(db, conversationId, turnId, mode, copies, createdBy),
    pull: (turnId, copies, createdBy) => pullFiles(db, conversationId, turnId, copies, createdBy),
    appendBlocks: async (blocks) => {
      await appendBlocks(db, conversationId, blocks);
    },
    mergeSources: (rows, text, turnId) => mergeToolSources(db, conversationId, rows, text, { turnId }),
    memory: {
      lexical: (query, filter, limit) => lexicalMemorySearch(db, conversationId, query, filter, limit),
      semantic: async (vector, model, filter, limit, minSimilarity) => {
        const pgvector = await pgvectorSchema(db);
        return pgvector
          ? pgvectorMemorySearch(db, pgvector, conversationId, vector, model, filter, limit, minSimilarity)
          : semanticMemorySearch(db, conversationId, vector, model, filter, limit, minSimilarity);
      },
      byTime: (order, filter, limit) => memoryByTime(db, conversationId, order, filter, limit),
    },
    recordExecUsage: (row) => recordExecUsage(db, { ...row, conversationId }),
  };
}
