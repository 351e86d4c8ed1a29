// The flame graph's script, run under node on a minimal stand-in for the
// DOM, for t/t0030-report-formats.sh.  Usage: node htflame.js SVG ZOOM
// SEARCH: click the frame named ZOOM, then search for the regular
// expression SEARCH, then reset the zoom.  Prints "ok<TAB>..." or
// "not ok<TAB>..." lines like t/lib/htformats.py.
'use strict';
const fs = require('fs');
const [svgPath, zoomName, searchFor] = process.argv.slice(2);
const svg = fs.readFileSync(svgPath, 'utf8');

function report(cond, desc, diag) {
  console.log((cond ? 'ok\t' : 'not ok\t') + desc);
  if (!cond && diag)
    console.log('  ' + diag);
}

function unescape(s) {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"').replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
}

function attrs(s) {
  const o = {};
  s.replace(/([\w-]+)="([^"]*)"/g, (m, k, v) => { o[k] = unescape(v); });
  return o;
}

function El(tag, a, text) {
  this.tag = tag;
  this.a = a;
  this.kids = [];
  this.style = {};
  this.textContent = text || '';
}
El.prototype.getAttribute = function (k) {
  return k in this.a ? this.a[k] : null;
};
El.prototype.setAttribute = function (k, v) { this.a[k] = String(v); };
El.prototype.getElementsByTagName = function (t) {
  return this.kids.filter((k) => k.tag === t);
};

const frames = [];
const frameRe = new RegExp('<g class="f" ([^>]*)><title>([^<]*)</title>' +
    '<rect ([^>]*)/><text ([^>]*)>([^<]*)</text></g>', 'g');
let m;
while ((m = frameRe.exec(svg)) !== null) {
  const g = new El('g', attrs(m[1]));
  g.kids = [new El('title', {}, unescape(m[2])), new El('rect', attrs(m[3])),
    new El('text', attrs(m[4]), unescape(m[5]))];
  frames.push(g);
}
const script = /<script[^>]*><!\[CDATA\[([\s\S]*?)\]\]><\/script>/.exec(svg);
if (!script || frames.length === 0) {
  report(false, 'flame graph: script and frames found');
  process.exit(1);
}
const byId = {};
for (const id of ['details', 'matched', 'reset', 'search'])
  byId[id] = new El('text', {});
global.document = {
  getElementsByClassName: () => frames,
  getElementById: (id) => byId[id],
};
global.prompt = () => searchFor;
global.alert = (e) => report(false, 'flame graph: no alert', String(e));
try {
  (0, eval)(script[1] + '\ninit();');
} catch (e) {
  report(false, 'flame graph: the script runs', String(e));
  process.exit(1);
}
report(true, 'flame graph: the script runs');

const byName = (n) => frames.find((g) => g.getAttribute('data-n') === n);
const visible = (g) => g.style.display !== 'none';
const rect = (g) => g.kids[1];
const num = (g, a) => +g.getAttribute(a);
const width = (g) => +rect(g).getAttribute('width');

const z = byName(zoomName);
if (!z) {
  report(false, 'flame graph: a frame ' + zoomName);
  process.exit(1);
}
z.onclick.call(z);
const x0 = num(z, 'data-x'), v0 = num(z, 'data-v');
const bad = [];
for (const g of frames) {
  const x = num(g, 'data-x'), v = num(g, 'data-v');
  const inside = x < x0 + v0 && x + v > x0;
  if (visible(g) !== inside)
    bad.push(g.getAttribute('data-n') + ' visible ' + visible(g));
  else if (inside) {
    const want = (Math.min(x + v, x0 + v0) - Math.max(x, x0)) / v0 * 1180;
    if (Math.abs(width(g) - want) > 0.01)
      bad.push(g.getAttribute('data-n') + ' width ' + width(g) + ' want ' +
          want);
  }
}
report(bad.length === 0 && Math.abs(width(z) - 1180) < 0.01,
    'flame graph: a click on ' + zoomName + ' zooms: it is full width, ' +
    'what does not overlap it hidden', bad.slice(0, 5).join('; '));

z.onmouseover.call(z);
report(byId.details.textContent.startsWith(zoomName),
    'flame graph: hovering shows the details', byId.details.textContent);

byId.search.onclick();
const hits = frames.filter((g) =>
  rect(g).getAttribute('fill') === 'rgb(230,0,230)');
const re = new RegExp(searchFor);
report(hits.length > 0 &&
    hits.length === frames.filter((g) =>
      re.test(g.getAttribute('data-n'))).length,
    'flame graph: search highlights the ' + hits.length + ' matches of ' +
    searchFor);
report(/^Matched: [\d.]+%$/.test(byId.matched.textContent),
    'flame graph: search gives the matched share',
    byId.matched.textContent);

byId.reset.onclick();
report(frames.every(visible) && Math.abs(width(frames[0]) - 1180) < 0.01,
    'flame graph: reset shows every frame again');
