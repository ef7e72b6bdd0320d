/**
 * Security (issue 36, hole 6): an HTML canvas reaches the network over WebRTC — CSP's fetch
 * directives do not cover a peer connection, whose ICE gathering sends STUN over UDP to any
 * address. A STUN listener on 127.0.0.1 must receive nothing while canvases try every way to get a
 * peer connection: directly, by a prefixed name, by restoring the deleted global, through a nested
 * frame (srcdoc in the canvas HTML, by property, setAttribute, innerHTML, document.write,
 * DOMParser, a template's clone; an about:blank child's window). Ordinary canvases still run
 * (script, innerHTML without frames).
 *
 * Real Chromium (playwright-core), the gateway's real `/canvas-frame.html` on a loopback port,
 * framed as the web chat frames it (sandbox="allow-scripts", the HTML posted to it). A control
 * run of the same attack in a frame with the old policy proves the listener hears it.
 */
import { test as nodeTest, after, before } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { createTestStack, type TestStack } from '../support/stack';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { NEED_CHROMIUM, launchChromium } from '../support/browser';
import { requiring, whenMet } from '../support/requirements';

const test = requiring(nodeTest, NEED_CHROMIUM);
let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let stun: dgram.Socket;
const packets: string[] = [];
let stunPort = 0;

before(
  whenMet(async () => {
    stun = dgram.createSocket('udp4');
    stun.on('message', (m, from) => packets.push(`${from.address}:${from.port} ${m.length} bytes`));
    await new Promise<void>((r) => stun.bind(0, '127.0.0.1', r));
    stunPort = (stun.address() as AddressInfo).port;
    stack = await createTestStack('sec_canvas_rtc');
    gw = await startGateway({
      client: stack.client,
      pool: stack.db.pool,
      apiKeys: ['canvas-rtc-key'],
      listen: false,
      port: 0,
      host: '127.0.0.1',
      log: () => {},
    });
    browser = await launchChromium();
  }, NEED_CHROMIUM),
);
after(
  whenMet(async () => {
    await browser?.close();
    await gw?.close();
    await stack?.teardown();
    stun?.close();
  }, NEED_CHROMIUM),
);

/** Script text that opens a peer connection to the listener with constructor `pc` (an expression). */
const offer = (pc: string) =>
  `(function(){var P=${pc};var c=new P({iceServers:[{urls:"stun:127.0.0.1:STUN_PORT"}]});c.createDataChannel("x");` +
  `c.createOffer().then(function(o){return c.setLocalDescription(o)});return "opened";})()`;
/** A nested frame's document whose own script opens one. */
const nested = `<script>${offer('RTCPeerConnection')}<\\/script>`;
/** The same as an HTML attribute value (quotes escaped, the script's end tag as it is). */
const attr = nested.replace(/"/g, '&quot;').replace(/\\\//g, '/');
/** The same inside a JavaScript string in an attribute of an HTML string. */
const inString = nested.replace(/"/g, '&quot;');

/** Each attack: a canvas body whose script reports into #out what happened. */
const ATTACKS: Record<string, string> = {
  direct: `report(function(){return ${offer('RTCPeerConnection')}})`,
  prefixed: `report(function(){return ${offer('webkitRTCPeerConnection')}})`,
  'data channel': `report(function(){return typeof RTCDataChannel + ' ' + typeof RTCSessionDescription})`,
  'restored global': `report(function(){delete window.RTCPeerConnection;window.RTCPeerConnection=function(){};return typeof RTCPeerConnection.prototype.createOffer})`,
  'srcdoc in the canvas HTML': `</script><iframe srcdoc="${attr}"></iframe><script>report(function(){return 'frames: '+document.querySelectorAll('iframe').length})`,
  'srcdoc property': `report(function(){var f=document.createElement('iframe');f.srcdoc='${nested}';document.body.appendChild(f);return 'appended'})`,
  'srcdoc attribute': `report(function(){var f=document.createElement('iframe');f.setAttribute('srcdoc','${nested}');document.body.appendChild(f);return 'appended'})`,
  innerHTML: `report(function(){document.body.insertAdjacentHTML('beforeend','<iframe srcdoc="${inString}"></iframe>');return 'inserted'})`,
  'document.write': `report(function(){document.write('<iframe srcdoc="${inString}"></iframe>');return 'written'})`,
  DOMParser: `report(function(){var d=new DOMParser().parseFromString('<iframe srcdoc="${inString}"></iframe>','text/html');document.body.appendChild(document.adoptNode(d.querySelector('iframe')));return 'adopted'})`,
  template: `</script><template id="t"><iframe srcdoc="${attr}"></iframe></template><script>report(function(){document.body.appendChild(document.getElementById('t').content.cloneNode(true));return 'cloned, frames: '+document.querySelectorAll('iframe').length})`,
  'about:blank child': `report(function(){var f=document.createElement('iframe');document.body.appendChild(f);return ${offer('f.contentWindow.RTCPeerConnection')}})`,
};

const canvasHtml = (body: string) =>
  `<!doctype html><html><body><div id="out"></div><script>
function report(f){var out=document.getElementById('out');var r;try{r='ran: '+f()}catch(e){r='refused: '+e.name}out.textContent=(out.textContent?out.textContent+' | ':'')+r;}
${body.replace(/STUN_PORT/g, String(stunPort))}
</script></body></html>`.replace(/STUN_PORT/g, String(stunPort));

/** A page of the gateway's origin that frames `frameUrl` as the chat does and posts `html` to it. */
async function runCanvas(page: Page, frameUrl: string, html: string): Promise<string> {
  await page.route(`${gw.url}/parent.html`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><iframe sandbox="allow-scripts" src="${frameUrl}"></iframe><script>
        var f = document.querySelector('iframe');
        f.addEventListener('load', function () { f.contentWindow.postMessage({ html: ${JSON.stringify(html).replace(/</g, '\\u003c')} }, '*'); });
      </script>`,
    }),
  );
  await page.goto(`${gw.url}/parent.html`);
  const frame = page.frame({ url: new RegExp(frameUrl.replace(/\./g, '\\.')) })!;
  await frame.locator('#out').filter({ hasText: /\S/ }).waitFor({ timeout: 15_000 });
  // ICE gathering starts at once; give any STUN packet time to arrive.
  await page.waitForTimeout(1500);
  return (await frame.locator('#out').textContent()) ?? '';
}

test('control: the same canvas script in a frame without the WebRTC guard does reach the listener', async () => {
  const page = await browser.newPage();
  // The frame as it was (sandboxed, default-src 'none', inline script), at this origin.
  await page.route(`${gw.url}/old-frame.html`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      headers: {
        'content-security-policy': "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'",
      },
      body: `<!doctype html><script>addEventListener('message', function (e) { document.open(); document.write(e.data.html); document.close(); });</script>`,
    }),
  );
  const before = packets.length;
  const out = await runCanvas(page, '/old-frame.html', canvasHtml(ATTACKS.direct!));
  assert.match(out, /ran: opened/);
  assert.ok(packets.length > before, 'the listener hears an unguarded canvas');
  await page.close();
});

test('attack: an HTML canvas sends STUN packets over WebRTC → the listener on 127.0.0.1 receives nothing', async () => {
  const before = packets.length;
  const outcomes: Record<string, string> = {};
  for (const [name, body] of Object.entries(ATTACKS)) {
    const page = await browser.newPage();
    outcomes[name] = await runCanvas(page, '/canvas-frame.html', canvasHtml(body));
    await page.close();
  }
  assert.deepEqual(packets.slice(before), [], `STUN packets from a canvas: ${JSON.stringify(outcomes, null, 1)}`);
  assert.match(outcomes.direct!, /refused: TypeError/);
  assert.match(outcomes['restored global']!, /refused: TypeError/);
  assert.match(outcomes['data channel']!, /ran: undefined undefined/);
  for (const name of ['srcdoc property', 'srcdoc attribute', 'innerHTML', 'document.write', 'DOMParser'])
    assert.match(outcomes[name]!, /refused: TypeError/, `${name}: ${outcomes[name]}`);
  assert.match(outcomes['srcdoc in the canvas HTML']!, /ran: frames: 0/);
  assert.match(outcomes['about:blank child']!, /refused: SecurityError/);
  // Where the browser knows the directive (Safari), the policy blocks WebRTC by itself.
  const res = await fetch(`${gw.url}/canvas-frame.html`);
  assert.match(res.headers.get('content-security-policy') ?? '', /webrtc 'block'/);
  await res.arrayBuffer();
});

test('an ordinary canvas still runs: its script, innerHTML and a canvas drawing', async () => {
  const page = await browser.newPage();
  const out = await runCanvas(
    page,
    '/canvas-frame.html',
    canvasHtml(
      `report(function(){var d=document.createElement('div');d.innerHTML='<b>bold</b> <table><tr><td>1</td></tr></table>';document.body.appendChild(d);` +
        `var c=document.createElement('canvas');var g=c.getContext('2d');g.fillStyle='rgb(200,30,60)';g.fillRect(0,0,4,4);` +
        `return d.querySelector('b').textContent+' '+d.querySelectorAll('td').length+' '+g.getImageData(1,1,1,1).data.slice(0,3).join(',')})`,
    ),
  );
  assert.equal(out, 'ran: bold 1 200,30,60');
  await page.close();
});
