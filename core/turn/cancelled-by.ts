/**
 * The one wording of a cancellation (a CancelRequest, core/turn/cancellation.ts), zod- and block-free: the turn's
 * workflow words its cancel record and its close with it without building the cancel signal's
 * schema and the block schemas in every turn instance (issue 42: ~0.4 s of the workflow thread per
 * 300 workflow instances under the peers bench). Pure.
 */
/** "cancelled by <who>" (": <reason>" when one was given). */
export function cancelledBy(req: { by: string; reason?: string | undefined }): string {
  return `cancelled by ${req.by}${req.reason ? `: ${req.reason}` : ''}`;
}
