/** Channeled streamer: incremental channel parser, citations, composite JSON, subscribers. */
export * from './types';
export { ChannelStreamParser, parseChannels, validateSpecs } from './parser';
export { ChannelSubscribers } from './subscribers';
export {
  CitationStream,
  CitationRenderer,
  replaceCitations,
  collectCitations,
  sourceIndex,
  type SourceIndex,
  parseSidList,
  matchCitation,
  escapeMarkdownTitle,
  escapeHtml,
  safeUrl,
} from './citations';
export { CompositeJsonStreamer, type CompositeOut } from './composite';
export { stripFence, parseJsonLenient, parseJsonInstance } from './json';
export { stripInvisible, TokenStream } from './tokens';
export { matchTag } from './tags';
