/**
 * A canvas rendered by kind, updating while the agent streams it: Markdown (sanitised), HTML in a
 * sandboxed frame without same-origin whose scripts run (below), JSON as a widget of its top-level
 * attributes (composite `attribute` events, or the streamed JSON text read attribute by
 * attribute), code highlighted. A hosted file's canvas is read from its signed URL.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { CompositeJsonStreamer } from '../../../core/channels/composite';
import type { Canvas } from '../live';
import { highlight } from '../markdown';
import { Markdown, useThrottled } from './markdown';

const MAX_FETCH = 4 * 1024 * 1024;

function useCanvasText(c: Canvas): { text: string; error?: string } {
  const [fetched, setFetched] = useState<{ text: string; error?: string } | null>(null);
  useEffect(() => {
    if (!c.src) return;
    let live = true;
    fetch(c.src)
      .then(async (r) => {
        if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
        const t = await r.text();
        if (live) setFetched({ text: t.length > MAX_FETCH ? t.slice(0, MAX_FETCH) : t });
      })
      .catch((err: Error) => live && setFetched({ text: '', error: err.message }));
    return () => {
      live = false;
    };
  }, [c.src]);
  return c.src ? (fetched ?? { text: '' }) : { text: c.text };
}

/** Top-level attributes of a (possibly still streaming) JSON object text, in order. */
function attributesOf(text: string): Array<[string, unknown]> {
  const s = new CompositeJsonStreamer();
  const out = new Map<string, unknown>();
  for (const o of [...s.push(text), ...s.finish()]) {
    if (o.kind === 'attribute') out.set(o.key, o.value);
    else out.set(o.key, `${typeof out.get(o.key) === 'string' ? (out.get(o.key) as string) : ''}${o.text}`);
  }
  return [...out];
}

function Value({ v }: { v: unknown }) {
  if (v === null || typeof v !== 'object') return <span class="scalar">{String(v)}</span>;
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object'))
    return (
      <ul class="list">
        {v.map((x, i) => (
          <li key={i}>{String(x)}</li>
        ))}
      </ul>
    );
  return <pre>{JSON.stringify(v, null, 2)}</pre>;
}

export function Widget({ attributes, done }: { attributes: Array<[string, unknown]>; done: boolean }) {
  return (
    <dl class="widget" aria-busy={!done} tabIndex={0}>
      {attributes.map(([k, v]) => (
        <div key={k} class="attr" data-key={k}>
          <dt>{k}</dt>
          <dd>
            <Value v={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The frame the gateway serves for HTML canvases (apps/gateway/canvas-routes.ts: its own CSP). */
export const CANVAS_FRAME = '/canvas-frame.html';

/**
 * An HTML canvas: the gateway's canvas frame, sandboxed (`allow-scripts` only: an opaque origin,
 * no cookies, no storage, no parent page, and by the frame's CSP no network, so no API call with
 * the user's key), sent the HTML by postMessage once it loaded. A srcdoc frame would inherit the
 * chat page's CSP, which runs no inline script. A new version (throttled while streaming) is a new
 * frame: the frame writes the first HTML it gets as its document.
 */
function HtmlFrame({ html, title, live }: { html: string; title: string; live: boolean }) {
  const shown = useThrottled(html, 1000, live);
  const version = useRef({ html: shown, n: 0 });
  if (version.current.html !== shown) version.current = { html: shown, n: version.current.n + 1 };
  const sent = useRef(new WeakSet<HTMLIFrameElement>());
  return (
    <iframe
      key={version.current.n}
      src={CANVAS_FRAME}
      sandbox="allow-scripts"
      title={title}
      referrerpolicy="no-referrer"
      onLoad={(e) => {
        const frame = e.currentTarget;
        // Its written document loads too: the HTML goes once per frame.
        if (sent.current.has(frame)) return;
        sent.current.add(frame);
        frame.contentWindow?.postMessage({ html: shown }, '*');
      }}
    />
  );
}

const LANG: Record<string, string> = {
  py: 'python',
  js: 'javascript',
  ts: 'typescript',
  sh: 'bash',
  sql: 'sql',
  css: 'css',
};

export function CanvasView({ canvas }: { canvas: Canvas }) {
  const { text, error } = useCanvasText(canvas);
  const attrs = useMemo(
    () => (canvas.kind === 'json' ? (canvas.attributes ?? attributesOf(text)) : []),
    [canvas.kind, canvas.attributes, text],
  );
  const lang = LANG[/\.([a-z]+)$/i.exec(canvas.title)?.[1]?.toLowerCase() ?? ''];
  return (
    <section class="canvas" data-kind={canvas.kind} data-key={canvas.key} aria-label={`canvas ${canvas.title}`}>
      <header class="canvas-title">
        <span>{canvas.title}</span>
        {!canvas.done && <span class="badge">streaming</span>}
      </header>
      {error ? (
        <p class="error">
          could not load {canvas.title}: {error}
        </p>
      ) : canvas.kind === 'markdown' ? (
        <Markdown text={text} tabIndex={0} live={!canvas.done} throttleMs={300} />
      ) : canvas.kind === 'html' ? (
        <HtmlFrame html={text} title={canvas.title} live={!canvas.done} />
      ) : canvas.kind === 'json' ? (
        <Widget attributes={attrs} done={canvas.done} />
      ) : canvas.kind === 'code' ? (
        <pre class="code" tabIndex={0}>
          <code class="hljs" dangerouslySetInnerHTML={{ __html: highlight(text, lang) }} />
        </pre>
      ) : (
        <pre tabIndex={0}>{text}</pre>
      )}
    </section>
  );
}
