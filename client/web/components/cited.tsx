/** Answer text with `[[S:n]]` citations as links to the sources panel. */
export function Cited({ text }: { text: string }) {
  const parts = text.split(/(\[\[S:[0-9,\s-]+\]\])/g);
  return (
    <div class="text">
      {parts.map((p, i) => {
        const m = /^\[\[S:([0-9,\s-]+)\]\]$/.exec(p);
        if (!m) return <span key={i}>{p}</span>;
        return (
          <sup key={i} class="cite">
            {m[1]!.split(',').map((n) => (
              <a key={n} href={`#source-${n.trim()}`} data-sid={n.trim()}>
                [{n.trim()}]
              </a>
            ))}
          </sup>
        );
      })}
    </div>
  );
}
