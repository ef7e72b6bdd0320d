/**
 * A native round's react.write calls shown while the model writes them: each call's argument
 * pieces (`tool-input-delta` parts) go through core/stream/write-canvas.ts, and its canvas
 * `delta` / `attribute` events are published at once — the web chat's canvas fills in token by
 * token instead of in one burst when the tool runs. The tool still streams the stored text when
 * it runs (from index 0: it replaces what the round showed, so a client ends with what was stored).
 */
import { NativeToolNames } from '../../../core/model/native-tool-names';
import type { StreamPart } from '../../../core/model/provider';
import { WriteCanvasStream } from '../../../core/stream/write-canvas';
import type { StreamPublisher } from '../../../store/publisher';
import { resolveWriteTarget } from '../../tools/react-write';

/** react.write's provider tool name (the native names' mapping of its id). */
const WRITE_NAME = new NativeToolNames(['react.write']).nameOf('react.write')!;

export interface WritePreview {
  /** One stream part of the round (everything but a react.write's argument pieces is ignored). */
  push(part: StreamPart): void;
  /** The model's response ended. */
  end(): void;
}

export function writePreview(publisher: StreamPublisher, turnId: string, round: number): WritePreview {
  const calls = new Map<number, WriteCanvasStream>();
  const resolve = (path: string) => {
    try {
      const t = resolveWriteTarget(turnId, path);
      return { path: t.logical, mime: t.mime };
    } catch {
      // A path the tool refuses shows nothing: its call's result says why.
      return undefined;
    }
  };
  const publish = (events: ReturnType<WriteCanvasStream['push']>) => {
    for (const e of events) publisher.emit(e);
  };
  return {
    push(part) {
      if (part.type !== 'tool-input-delta' || part.name !== WRITE_NAME) return;
      let call = calls.get(part.index);
      if (!call) calls.set(part.index, (call = new WriteCanvasStream(resolve, round)));
      publish(call.push(part.json));
    },
    end() {
      for (const call of calls.values()) publish(call.end());
    },
  };
}
