/**
 * The MCP tools' shared argument schemas: a text Postgres can store and a person can read
 * (core/text.ts), its problem named in the error, and the conversation id every tool takes.
 */
import { z } from 'zod';
import { textProblem } from '../../core/text';

/** A refinement naming a text's problem (a NUL, a control character, an empty visible text …). */
export const textCheck =
  (rules?: { visible?: boolean }) =>
  (s: string, ctx: z.RefinementCtx<string>): void => {
    const problem = textProblem(s, rules);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  };

/** A non-empty text argument of at most `max` characters. */
export const Text = (max: number, rules?: { visible?: boolean }) =>
  z.string().min(1).max(max).superRefine(textCheck(rules));

export const ConversationIdParam = Text(200).describe('The conversation id (as list_conversations shows it).');
