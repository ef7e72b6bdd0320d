/**
 * The frame an HTML canvas runs in (`GET /canvas-frame.html`, canvas-routes.ts): its policy and its
 * one script. The canvas runs with no network — no fetch, no form, no navigation (`default-src
 * 'none'`), and no WebRTC either, which CSP's fetch directives do not cover (a peer connection
 * sends STUN over UDP to any address):
 *
 * - `webrtc 'block'` where the browser supports the directive (Safari);
 * - the WebRTC interfaces (RTCPeerConnection, RTCDataChannel, …) removed from the frame's window,
 *   locked, before any canvas script runs (the window outlives `document.open()`);
 * - no nested frame with a script of its own: a child frame would be a new window with its own
 *   WebRTC. The sandbox already makes an `about:blank` child another origin (unreachable), data:,
 *   blob: and URLs are refused by `default-src 'none'`, and `srcdoc` — the one way left — goes
 *   through Trusted Types (`require-trusted-types-for 'script'`): the frame's `default` policy
 *   refuses every srcdoc and any HTML string that would create a frame (innerHTML,
 *   document.write, DOMParser…), and the canvas's own HTML is written without frame elements.
 *   A canvas may create no other policy (`trusted-types` names ours only).
 */

/** The WebRTC interfaces taken out of the frame's window. */
export const WEBRTC_INTERFACES = [
  'RTCPeerConnection',
  'webkitRTCPeerConnection',
  'RTCDataChannel',
  'RTCSessionDescription',
  'RTCIceCandidate',
  'RTCIceTransport',
  'RTCDtlsTransport',
  'RTCSctpTransport',
  'RTCRtpSender',
  'RTCRtpReceiver',
  'RTCRtpTransceiver',
  'RTCRtpScriptTransform',
  'RTCCertificate',
  'RTCDTMFSender',
  'RTCStatsReport',
  'RTCTrackEvent',
  'RTCPeerConnectionIceEvent',
  'RTCPeerConnectionIceErrorEvent',
  'RTCDataChannelEvent',
  'RTCDTMFToneChangeEvent',
  'RTCError',
  'RTCErrorEvent',
  'RTCEncodedAudioFrame',
  'RTCEncodedVideoFrame',
] as const;

/** The frame's policy: its own opaque origin, inline script and style, no network, no WebRTC, framed by this origin only. */
export const CANVAS_FRAME_CSP = [
  'sandbox allow-scripts',
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  'media-src data: blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  "webrtc 'block'",
  "require-trusted-types-for 'script'",
  'trusted-types dreact-canvas default',
].join('; ');

/**
 * Runs first in the frame: removes WebRTC, installs the Trusted Types policies, then waits for the
 * canvas HTML from the frame's parent (postMessage) and writes it as the frame's document
 * (document.write keeps this window, its policy and what this script removed).
 */
const FRAME_SCRIPT = `(function () {
  'use strict';
  var RTC = ${JSON.stringify(WEBRTC_INTERFACES)};
  for (var i = 0; i < RTC.length; i++) {
    try { Object.defineProperty(window, RTC[i], { value: undefined, writable: false, configurable: false }); } catch (e) {}
  }
  var FRAMES = 'iframe,frame,frameset,object,embed,fencedframe,portal';
  var tt = window.trustedTypes;
  var raw = tt ? tt.createPolicy('dreact-canvas', { createHTML: function (s) { return s; } }) : { createHTML: function (s) { return s; } };
  var trusted = function (s) { return raw.createHTML(s); };
  /** The frame elements of a parsed document, template contents included. */
  function framesOf(root) {
    var found = Array.prototype.slice.call(root.querySelectorAll(FRAMES));
    var templates = root.querySelectorAll('template');
    for (var i = 0; i < templates.length; i++) found = found.concat(framesOf(templates[i].content));
    return found;
  }
  function parse(html) { return new DOMParser().parseFromString(trusted(html), 'text/html'); }
  if (tt)
    tt.createPolicy('default', {
      createHTML: function (s, _type, sink) {
        if (/srcdoc/i.test(String(sink))) throw new TypeError('a canvas may not create frames (srcdoc refused)');
        if (framesOf(parse(String(s))).length > 0) throw new TypeError('a canvas may not create frames');
        return s;
      },
      createScript: function (s) { return s; },
    });
  /** The canvas document without frame elements (unchanged when it has none). */
  function withoutFrames(html) {
    var doc = parse(html);
    var frames = framesOf(doc);
    if (frames.length === 0) return html;
    for (var i = 0; i < frames.length; i++) frames[i].remove();
    return (doc.doctype ? '<!DOCTYPE ' + doc.doctype.name + '>' : '') + doc.documentElement.outerHTML;
  }
  addEventListener('message', function (e) {
    if (e.source !== parent || !e.data || typeof e.data.html !== 'string') return;
    document.open();
    document.write(trusted(withoutFrames(e.data.html)));
    document.close();
  });
})();`;

/** The frame's document: the script above, nothing else. */
export const CANVAS_FRAME_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>canvas</title></head><body><script>
${FRAME_SCRIPT}
</script></body></html>`;
