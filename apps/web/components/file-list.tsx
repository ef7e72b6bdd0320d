/**
 * The files a turn made for the user, one card each (name, size, type, download): images show
 * inline, PDFs open in a new tab. Links are the gateway's short-lived signed URLs (no header
 * needed); a file known only from the stream's `done` has none until the list is read.
 */
import type { HostedFile } from '../api';

export function fileSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

const isImage = (f: HostedFile) => /^image\/(png|jpeg|gif|webp|avif)$/.test(f.mime);
const isPdf = (f: HostedFile) => f.mime === 'application/pdf';

/** `?download=1` makes the gateway answer as an attachment (an inline type would open instead). */
const withDownload = (url: string) => `${url}${url.includes('?') ? '&' : '?'}download=1`;

export function FileCard({ file }: { file: HostedFile }) {
  const url = file.signedUrl;
  return (
    <figure class="file-card" data-mime={file.mime} data-path={file.path}>
      {url && isImage(file) && <img src={url} alt={file.name} loading="lazy" />}
      <figcaption>
        <span class="file-name">{file.name}</span>
        <span class="file-meta">
          {fileSize(file.size)} · {file.mime.split(';')[0]}
        </span>
        {url && (
          <span class="file-actions">
            {isPdf(file) && (
              <a href={url} target="_blank" rel="noreferrer">
                Open
              </a>
            )}
            <a href={withDownload(url)} download={file.name} aria-label={`Download ${file.name}`}>
              Download
            </a>
          </span>
        )}
      </figcaption>
    </figure>
  );
}

export function FileList({ files, label }: { files: HostedFile[]; label: string }) {
  if (files.length === 0) return null;
  return (
    <div class="files" role="group" aria-label={label}>
      {files.map((f) => (
        <FileCard key={f.path} file={f} />
      ))}
    </div>
  );
}
