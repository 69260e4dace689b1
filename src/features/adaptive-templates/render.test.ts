import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createKeyring } from '../../core/keyring.ts';
import { signLaunch, verifyLaunch } from './launch-token.ts';
import { checkSource, checkValues, extractFields, fill, kindOf, renderSvg } from './render.ts';

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
<rect width="400" height="200" fill="{{background|#ffcc00}}"/>
<text x="20" y="80" font-size="32" fill="#000">{{headline|Big sale}}</text>
<text x="20" y="140" font-size="20">{{subline}} — {{headline}}</text></svg>`;

describe('adaptive template sources', () => {
  it('reads named fields with defaults, in order, once each', () => {
    assert.deepEqual(extractFields(SVG), [
      { name: 'background', label: 'Background', default: '#ffcc00', maxLength: 200, multiline: false },
      { name: 'headline', label: 'Headline', default: 'Big sale', maxLength: 200, multiline: false },
      { name: 'subline', label: 'Subline', default: '', maxLength: 200, multiline: false },
    ]);
    assert.deepEqual(
      extractFields('<p>{{ first_name }} {{lastName}}</p>').map((f) => f.label),
      ['First name', 'Last Name'],
    );
  });

  it('escapes values so they cannot add markup', () => {
    const out = fill(SVG, { background: '"/><script>alert(1)</script>', headline: '<b>&</b>', subline: "it's" });
    assert.doesNotMatch(out, /<script|<b>/);
    assert.match(out, /fill="&quot;\/&gt;&lt;script&gt;/);
    assert.match(out, /&lt;b&gt;&amp;&lt;\/b&gt;/);
    assert.match(out, /it&#39;s — &lt;b&gt;/);
  });

  it('checks values: unknown fields, non-strings and lengths are 400s naming the field; missing take the default', () => {
    const fields = extractFields(SVG);
    assert.deepEqual(
      { ...checkValues(fields, { subline: 'x' }, 'body.values') },
      { background: '#ffcc00', headline: 'Big sale', subline: 'x' },
    );
    assert.throws(() => checkValues(fields, { nope: 'x' }, 'body.values'), /body\.values\.nope: is not a field/);
    assert.throws(
      () => checkValues(fields, { headline: 5 }, 'body.values'),
      /body\.values\.headline: must be a string/,
    );
    assert.throws(() => checkValues(fields, { headline: 'x'.repeat(201) }, 'body.values'), /longer than 200/);
    assert.equal(checkValues(fields, { headline: 'a\nb' }, 'v').headline, 'a b', 'single-line fields fold newlines');
  });

  it('refuses unsafe or useless sources', () => {
    const bad: [string, RegExp][] = [
      ['<svg><image href="file:///etc/passwd"/>{{x}}</svg>', /external resource/],
      ['<svg><image xlink:href="https://evil.test/a.png"/>{{x}}</svg>', /external resource/],
      ['<svg><style>rect{fill:url(https://evil.test/x)}</style>{{x}}</svg>', /CSS url/],
      ['<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;{{x}}</svg>', /DOCTYPE/],
      ['<svg onload="alert(1)">{{x}}</svg>', /scripts/],
      ['<svg><script>1</script>{{x}}</svg>', /scripts/],
      ['<svg><text>no fields</text></svg>', /names no fields/],
      ['<html>{{x}}</html>', /not an SVG/],
    ];
    for (const [source, message] of bad)
      assert.throws(() => checkSource('svg', source, 'body.assetId'), message, source);
    checkSource('svg', '<svg><use href="#a"/><image href="data:image/png;base64,AAAA"/>{{x}}</svg>', 'f');
    checkSource('html', '<html><body><h1>{{title}}</h1></body></html>', 'f');
    assert.equal(kindOf('image/svg+xml', 'a'), 'svg');
    assert.equal(kindOf('application/octet-stream', 'banner.SVG'), 'svg');
    assert.equal(kindOf('text/html; charset=utf-8', 'x'), 'html');
    assert.equal(kindOf('image/png', 'a.png'), null);
  });

  it('renders a filled SVG to a PNG of its size with sharp', async () => {
    const png = await renderSvg(fill(SVG, { headline: 'Hello', background: '#00ff00', subline: 'x' }));
    const meta = await sharp(png).metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.width, 400);
    assert.equal(meta.height, 200);
    const { data } = await sharp(png)
      .extract({ left: 390, top: 5, width: 1, height: 1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([...data.subarray(0, 3)], [0, 255, 0], 'the background field coloured the image');
  });
});

describe('launch tokens', () => {
  const keys = createKeyring('k'.repeat(40));
  const claims = { t: 'template', u: 'user', o: 'org', e: 2_000 };
  it('verify until they expire, and only unaltered', () => {
    const token = signLaunch(keys, claims);
    assert.deepEqual(verifyLaunch(keys, token, 1_999), claims);
    assert.equal(verifyLaunch(keys, token, 2_000), null);
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claims, u: 'admin' })).toString('base64url');
    assert.equal(verifyLaunch(keys, `${forged}.${mac}`, 0), null);
    assert.equal(verifyLaunch(keys, `${payload}.${mac!.slice(0, -1)}A`, 0), null);
    assert.equal(verifyLaunch(createKeyring('o'.repeat(40)), token, 0), null);
    assert.equal(verifyLaunch(keys, 'garbage', 0), null);
  });
});
