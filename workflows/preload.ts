/**
 * Evaluated once per worker thread before any workflow exists (bundler `preloadModules`): zod's
 * module graph, the largest part of instantiating a workflow, is then shared by every workflow of
 * the reusable V8 context instead of rebuilt per instance. zod keeps no per-workflow state.
 *
 * Shared modules are frozen after this runs, so zod's lazily set globals (the default locale and
 * memoizer, set on the first schema built and parsed) are set here first. The export keeps the
 * bundler from dropping the import (zod is marked side-effect free).
 */
import { z } from 'zod';

const warmUp = z.object({ ok: z.string() });
if (warmUp.safeParse({ ok: 1 }).success) throw new Error('zod preload: the warm-up parse should have failed');

export const preloadedZod = z;
