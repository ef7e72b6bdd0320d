/**
 * Attachment preflight on real bytes (file-type, yauzl, unpdf): accepted files keep a safe
 * name, a sniffed type and extracted text; every bad input is refused with the file and the
 * rule in the message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preflightAttachments, type AttachmentUpload } from '../../../client/attachments/preflight';
import { AttachmentRejected, sanitizeName } from '../../../core/attachments/policy';
import { docx, pdf, png, zip } from '../../support/files';

const up = (name: string, bytes: Buffer | string): AttachmentUpload => ({
  name,
  bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes,
});

test('accepted: PNG, PDF (text extracted), CSV, Markdown, JSON, DOCX; names made safe', async () => {
  const files = await preflightAttachments([
    up('chart.png', png()),
    up('Invoice March.pdf', pdf('Invoice 42 total 99 EUR')),
    up('data.csv', 'a,b\n1,2\n'),
    up('notes.md', '# Notes\n'),
    up('cfg.json', '{"a":1}'),
    up('plan.docx', docx()),
    up('\u0007 weird\tname?.txt', 'hello'),
  ]);
  assert.deepEqual(
    files.map((f) => [f.name, f.mime, f.kind]),
    [
      ['chart.png', 'image/png', 'image'],
      ['Invoice March.pdf', 'application/pdf', 'pdf'],
      ['data.csv', 'text/csv', 'text'],
      ['notes.md', 'text/markdown', 'text'],
      ['cfg.json', 'application/json', 'text'],
      ['plan.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'office'],
      ['weird name_.txt', 'text/plain', 'text'],
    ],
  );
  assert.equal(files[1]!.text, 'Invoice 42 total 99 EUR');
  assert.equal(files[1]!.pages, 1);
  assert.match(files[0]!.sha256, /^[0-9a-f]{64}$/);
});

const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200, 1)]);
const BAD: Array<[string, AttachmentUpload[], string, RegExp?]> = [
  ['empty file', [up('empty.txt', '')], 'empty'],
  ['over the per-file cap', [up('big.txt', Buffer.alloc(1200, 0x61))], 'file_size'],
  ['over the per-turn cap', [up('a.txt', Buffer.alloc(900, 0x61)), up('b.txt', Buffer.alloc(900, 0x62))], 'turn_size'],
  ['too many files', Array.from({ length: 4 }, (_, i) => up(`f${i}.txt`, 'x')), 'file_count'],
  ['duplicate names (case-insensitive)', [up('a.txt', 'x'), up('A.TXT', 'y')], 'duplicate_name'],
  ['path traversal', [up('../../etc/passwd', 'root:x')], 'name'],
  ['absolute path', [up('/etc/passwd', 'root:x')], 'name'],
  ['windows traversal', [up('..\\..\\boot.ini', 'x')], 'name'],
  ['dot-dot name', [up('..', 'x')], 'name'],
  ['NUL in the name', [up('a\0.txt', 'x')], 'name'],
  ['name with nothing left', [up('...', 'x')], 'name'],
  ['spoofed MIME: an executable named .png', [up('photo.png', exe)], 'type_not_allowed', /application\/x-msdownload/],
  [
    'spoofed extension: a PDF named .png',
    [up('photo.png', pdf('x'))],
    'extension_mismatch',
    /bytes are application\/pdf/,
  ],
  ['a PNG named .jpg', [up('photo.jpg', png())], 'extension_mismatch'],
  ['a plain zip', [up('archive.zip', zip({ 'a.txt': 'x' }))], 'type_not_allowed', /application\/zip/],
  ['zip bomb in a docx', [up('bomb.docx', docx({ bombBytes: 20_000_000 }))], 'archive_bomb', /compression ratio/],
  ['macro-bearing document', [up('report.docx', docx({ macros: true }))], 'macros'],
  ['binary with a text extension', [up('data.txt', Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x00]))], 'type_not_allowed'],
  ['invalid UTF-8 text', [up('data.csv', Buffer.from([0x61, 0xc3, 0x28, 0x62]))], 'type_not_allowed'],
  [
    'text without an allowed extension',
    [up('script.sh', '#!/bin/sh\nrm -rf /\n')],
    'type_not_allowed',
    /text extension/,
  ],
  ['HTML is not allowed', [up('page.html', '<html><script>alert(1)</script></html>')], 'type_not_allowed'],
  [
    'SVG (script-capable) is not allowed',
    [up('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>')],
    'type_not_allowed',
  ],
  [
    'a corrupt PDF',
    [up('broken.pdf', Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog'))],
    'unreadable',
    /not a readable PDF/,
  ],
  [
    'a GIF claiming to be a docx',
    [up('plan.docx', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'))],
    'extension_mismatch',
  ],
];

for (const [label, uploads, rule, detail] of BAD) {
  test(`refused: ${label} → ${rule}`, async () => {
    const limits = { maxFileBytes: 1024, maxTurnBytes: 1500, maxFiles: 3 };
    const big = label.includes('bomb') ? { maxFileBytes: 10 * 1024 * 1024, maxTurnBytes: 20 * 1024 * 1024 } : {};
    await assert.rejects(preflightAttachments(uploads, { ...limits, ...big }), (err: unknown) => {
      assert.ok(err instanceof AttachmentRejected, String(err));
      assert.equal(err.rule, rule, err.message);
      assert.ok(
        uploads.some((u) => u.name === err.file),
        `names the file: ${err.message}`,
      );
      assert.match(err.message, new RegExp(`^attachment ".*" rejected \\(${rule}\\): `));
      if (detail) assert.match(err.message, detail);
      return true;
    });
  });
}

test('sanitizeName keeps the extension when cutting a long name', () => {
  const long = `${'x'.repeat(300)}.pdf`;
  const safe = sanitizeName(long, { maxNameChars: 40 });
  assert.equal(safe.length, 40);
  assert.ok(safe.endsWith('.pdf'));
  assert.equal(sanitizeName('  .hidden  report .md', { maxNameChars: 120 }), 'hidden report .md');
});
