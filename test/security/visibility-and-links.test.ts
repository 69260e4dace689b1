import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ALL_PERMISSIONS } from '../../src/core/authz/catalog.ts';
import { startWorker } from '../../src/core/jobs/worker.ts';
import { assetWorker, createAsset, jpeg, pathOf, uploadAsset } from '../helpers/assets.ts';
import { assetJobHandlers } from '../../src/features/assets/index.ts';
import { collectionJobHandlers } from '../../src/features/collections/index.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg, createTestUser } from '../helpers/factories.ts';
import { createGroup, createTemplate } from '../helpers/permissions.ts';

// Issue 23: one visibility rule for an asset everywhere (defect 3), no existence oracle when
// unlinking (defect 12b), and links that die with what they point at (defect 10).
forEachEngine('security: asset visibility, unlink oracle, links dying with their source', (ctx) => {
  it("a metadata template's access templates hide its assets from every read (GET, simplified, latest, versions, rendition, links, story boards), not only from search", async () => {
    const org = await createTestOrg(ctx());
    const pressGroup = await createGroup(ctx(), org);
    const access = await createTemplate(ctx(), org, [
      [org.groups.administrators, ['view']],
      [pressGroup, ['view']],
    ]);
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/template',
      headers: org.admin.headers,
      payload: { name: `Press ${Math.random()}`, groupIds: [], accessTemplates: [access] },
    });
    assert.equal(made.statusCode, 201, made.body);
    const worker = assetWorker(ctx());
    let press;
    try {
      press = await uploadAsset(ctx(), org, await jpeg(16, 16), 'press.jpg', {
        metadataTemplateId: json(made).templateId,
      });
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const plain = await createAsset(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${plain.objectId}/link`,
          headers: org.admin.headers,
          payload: { secondaryIds: [{ id: press.objectId, linkType: 'child' }] },
        })
      ).statusCode,
      200,
    );
    const outsider = await createTestUser(ctx(), org, {
      privileges: ['download', 'view_storyboards', 'storyboard_management'],
    });
    const insider = await createTestUser(ctx(), org, {
      privileges: ['download'],
      groupIds: [org.groups.everyone, pressGroup],
    });
    const reads = [
      `/v1/asset/${press.objectId}`,
      `/v1/assets/asset/${press.objectId}`,
      `/v1/asset/${press.objectId}/latest`,
      `/v1/asset/${press.objectId}/version`,
      `/v1/asset/${press.objectId}/rendition/imageThumb`,
      `/v1/asset/${press.objectId}/link`,
      `/v1/asset/${press.objectId}/content`,
    ];
    for (const url of reads) {
      // Twice: the second answer comes from the asset view cache where there is one.
      for (let i = 0; i < 2; i++)
        assert.equal(
          (await ctx().inject({ method: 'GET', url, headers: outsider.headers })).statusCode,
          404,
          `outsider ${url}`,
        );
      assert.equal(
        (await ctx().inject({ method: 'GET', url, headers: insider.headers })).statusCode,
        200,
        `insider ${url}`,
      );
    }
    const links = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${plain.objectId}/link`, headers: outsider.headers }),
    );
    assert.deepEqual(links, []);
    const board = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: org.admin.headers,
      payload: {
        title: 'B',
        status: 'published',
        coverAssetId: press.objectId,
        blocks: [
          { type: 'asset', assetId: press.objectId, caption: 'secret caption' },
          { type: 'heading', text: 'Hello' },
        ],
      },
    });
    assert.equal(board.statusCode, 201, board.body);
    const view = await ctx().inject({
      method: 'GET',
      url: `/v1/storyboards/${json(board).id}/view`,
      headers: outsider.headers,
    });
    assert.equal(view.statusCode, 200, view.body);
    assert.doesNotMatch(view.body, new RegExp(`${press.objectId}|secret caption`));
    assert.equal(json(view).cover, null);
    // Bulk edit and CDN publish apply the same rule: the outsider cannot move the hidden asset into
    // an open template, nor publish it (404 naming the asset, as a missing one).
    const bulkUser = await createTestUser(ctx(), org, {
      privileges: ['download', 'cdn_management', 'content_management'],
    });
    const open = (
      await ctx()
        .deps.db.selectFrom('metadata_templates')
        .select('id')
        .where('org_id', '=', org.orgId)
        .where('is_default', '=', 1)
        .executeTakeFirstOrThrow()
    ).id;
    const bulk = await ctx().inject({
      method: 'PATCH',
      url: '/v1/asset',
      headers: bulkUser.headers,
      payload: { metadataTemplateId: open, objectIds: [press.objectId], metadataDocument: [] },
    });
    assert.equal(bulk.statusCode, 200, bulk.body);
    const bulkWorker = assetWorker(ctx());
    try {
      await bulkWorker.drain();
    } finally {
      await bulkWorker.stop();
    }
    const outcome = json(
      await ctx().inject({ method: 'GET', url: `/v1/action/${json(bulk).jobId}`, headers: bulkUser.headers }),
    );
    assert.match(JSON.stringify(outcome), /Asset not found/, JSON.stringify(outcome));
    const stored = await ctx()
      .deps.db.selectFrom('assets')
      .select('metadata_template_id')
      .where('id', '=', press.objectId)
      .executeTakeFirstOrThrow();
    assert.equal(stored.metadata_template_id, json(made).templateId);
    const zoneName = `assets-${Math.random().toString(36).slice(2, 10)}`;
    const configured = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/configure',
      headers: org.admin.headers,
      payload: { name: zoneName, region: 'de', url: `https://${zoneName}.cdn.example.com` },
    });
    assert.equal(configured.statusCode, 200, configured.body);
    const publish = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: bulkUser.headers,
      payload: { assets: [press.objectId] },
    });
    assert.equal(publish.statusCode, 404, publish.body);
    assert.equal(json(publish).details?.[0]?.field, 'body.assets[0]', publish.body);
  });

  it('a story-board editor sees no ids or captions of sources they may not view, and saving the board back keeps them (defect 12a)', async () => {
    const org = await createTestOrg(ctx());
    const editor = await createTestUser(ctx(), org, {
      privileges: ['view_storyboards', 'storyboard_management', 'collection'],
    });
    const groupId = await createGroup(ctx(), org);
    const secret = await createTemplate(ctx(), org, [
      [groupId, ['view']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const hiddenAsset = await createAsset(ctx(), org, { securityTemplateIds: [secret] });
    const shownAsset = await createAsset(ctx(), org);
    const hiddenCollection = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/collection',
        headers: org.admin.headers,
        payload: { collectionType: 'secured', name: `hidden ${Math.random()}`, securityTemplateIds: [secret] },
      }),
    ).collectionId;
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: org.admin.headers,
      payload: {
        title: 'B',
        status: 'published',
        coverAssetId: hiddenAsset.objectId,
        blocks: [
          { type: 'asset', assetId: hiddenAsset.objectId, caption: 'secret caption' },
          { type: 'gallery', assetIds: [shownAsset.objectId, hiddenAsset.objectId], caption: 'gallery caption' },
          { type: 'collection', collectionId: hiddenCollection, title: 'secret title', caption: 'collection caption' },
        ],
      },
    });
    assert.equal(made.statusCode, 201, made.body);
    const id = json(made).id;
    const seen = await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}`, headers: editor.headers });
    assert.equal(seen.statusCode, 200, seen.body);
    assert.equal(json(seen).canEdit, true);
    assert.doesNotMatch(
      seen.body,
      new RegExp(`${hiddenAsset.objectId}|${hiddenCollection}|secret caption|secret title|collection caption`),
    );
    const blocks = json(seen).blocks;
    assert.deepEqual(
      blocks.map((b: { redacted?: boolean }) => b.redacted === true),
      [true, true, true],
    );
    assert.deepEqual(blocks[1].assetIds, [shownAsset.objectId]);
    // The board list shows no hidden cover either (its summary is the same as the board's).
    const listed = await ctx().inject({ method: 'GET', url: '/v1/storyboards', headers: editor.headers });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.doesNotMatch(listed.body, new RegExp(hiddenAsset.objectId));
    const adminList = json(await ctx().inject({ method: 'GET', url: '/v1/storyboards', headers: org.admin.headers }));
    assert.equal(
      (adminList.items ?? adminList).find((b: { id: string }) => b.id === id)?.coverAssetId,
      hiddenAsset.objectId,
    );
    // The editor saves the board as they see it: what they could not see stays.
    const saved = await ctx().inject({
      method: 'PUT',
      url: `/v1/storyboards/${id}/blocks`,
      headers: editor.headers,
      payload: { blocks: blocks.map(({ redacted: _r, ...b }: { redacted?: boolean }) => b) },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.doesNotMatch(saved.body, new RegExp(`${hiddenAsset.objectId}|${hiddenCollection}`));
    const full = json(await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}`, headers: org.admin.headers }));
    assert.equal(full.blocks[0].assetId, hiddenAsset.objectId);
    assert.equal(full.blocks[0].caption, 'secret caption');
    assert.deepEqual(full.blocks[1].assetIds, [shownAsset.objectId, hiddenAsset.objectId]);
    assert.equal(full.blocks[2].collectionId, hiddenCollection);
    assert.equal(full.coverAssetId, hiddenAsset.objectId);
  });

  it('unlinking a secondary the caller may not view answers exactly as a missing one, and the link stays (defect 12b)', async () => {
    const org = await createTestOrg(ctx());
    const groupId = await createGroup(ctx(), org);
    const linker = await createTestUser(ctx(), org, { groupIds: [groupId] });
    const theirs = await createTemplate(ctx(), org, [
      [groupId, ['view', 'relationship']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const primary = await createAsset(ctx(), org, { securityTemplateIds: [theirs] });
    const hidden = await createAsset(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${primary.objectId}/link`,
          headers: org.admin.headers,
          payload: { secondaryIds: [{ id: hidden.objectId, linkType: 'child' }] },
        })
      ).statusCode,
      200,
    );
    const missingId = '0190a4b2-0000-7000-8000-000000000000';
    const unlink = (id: string) =>
      ctx().inject({
        method: 'PATCH',
        url: `/v1/asset/${primary.objectId}/link`,
        headers: linker.headers,
        payload: { secondaryIds: [{ id }] },
      });
    const onHidden = await unlink(hidden.objectId);
    const onMissing = await unlink(missingId);
    assert.equal(onHidden.statusCode, onMissing.statusCode);
    const strip = (body: string, id: string) => body.replaceAll(id, 'ID').replace(/"relationshipId":"[^"]*"/g, '');
    assert.equal(strip(onHidden.body, hidden.objectId), strip(onMissing.body, missingId));
    assert.equal(json(onHidden)[0].status, 'error');
    const still = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${primary.objectId}/link`, headers: org.admin.headers }),
    );
    assert.equal(still.length, 1);
  });

  it('an exposed rendition or original link stops serving when its asset goes to the recycle bin (defect 10)', async () => {
    const org = await createTestOrg(ctx());
    const worker = assetWorker(ctx());
    try {
      const created = await uploadAsset(ctx(), org, await jpeg(64, 64), 'x.jpg');
      await worker.drain();
      const exposed = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/expose',
        headers: org.admin.headers,
        payload: [
          {
            id: created.objectId,
            components: [
              { componentType: 'rendition', componentRef: ['imageThumb'], expiration: 600 },
              { componentType: 'object', componentRef: 'original', expiration: 600 },
            ],
          },
        ],
      });
      assert.equal(exposed.statusCode, 200, exposed.body);
      const urls = json(exposed)[0].components.map((c: { url: string }) => pathOf(c.url));
      assert.equal(urls.length, 2);
      for (const url of urls) assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 200);
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${created.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        200,
      );
      for (const url of urls) assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 404, url);
    } finally {
      await worker.stop();
    }
  });
  it('a collection-share link dies when the collection is deleted, when an asset inside is purged, and when the share is revoked (DELETE, 204, then 410) (defect 10)', async () => {
    const org = await createTestOrg(ctx());
    const worker = startWorker({
      db: ctx().deps.db,
      engine: ctx().deps.engine,
      clock: ctx().deps.clock,
      log: ctx().deps.log,
      signal: ctx().deps.jobs,
      handlers: { ...collectionJobHandlers(ctx().deps), ...assetJobHandlers(ctx().deps) },
      pollMs: 3_600_000,
    });
    try {
      const shareOf = async (withPurgeable = false) => {
        const a = await uploadAsset(ctx(), org, await jpeg(8, 8), 'one.jpg');
        const b = withPurgeable ? await uploadAsset(ctx(), org, await jpeg(8, 8), 'two.jpg') : undefined;
        const c = await ctx().inject({
          method: 'POST',
          url: '/v1/collection',
          headers: org.admin.headers,
          payload: {
            collectionType: 'secured',
            name: `s ${Math.random()}`,
            securityTemplateIds: [org.defaultTemplateId],
            collectionDocument: [a.fileId, ...(b ? [b.fileId] : [])],
          },
        });
        assert.equal(c.statusCode, 200, c.body);
        const collectionId = json(c).collectionId as string;
        const started = await ctx().inject({
          method: 'POST',
          url: `/v1/collection/${collectionId}/share`,
          headers: org.admin.headers,
          payload: { sender: { name: 'A' }, shareUsers: [{ email: 'out@example.test' }] },
        });
        assert.equal(started.statusCode, 202, started.body);
        await worker.drain();
        const url = pathOf(json(started).links[0].url);
        assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 200);
        return { url, collectionId, shareId: json(started).actionId as string, purgeable: b };
      };
      const deleted = await shareOf();
      assert.equal(
        (
          await ctx().inject({
            method: 'DELETE',
            url: `/v1/collection/${deleted.collectionId}`,
            headers: org.admin.headers,
          })
        ).statusCode,
        200,
      );
      assert.equal((await ctx().inject({ method: 'GET', url: deleted.url })).statusCode, 404);

      const purged = await shareOf(true);
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${purged.purgeable!.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        200,
      );
      assert.equal((await ctx().inject({ method: 'GET', url: purged.url })).statusCode, 410, 'in the recycle bin');
      assert.ok(
        (
          await ctx().inject({
            method: 'POST',
            url: '/v1/asset/purge',
            headers: org.admin.headers,
            payload: { objectIds: [purged.purgeable!.objectId] },
          })
        ).statusCode < 300,
      );
      await worker.drain();
      const afterPurge = await ctx().inject({ method: 'GET', url: purged.url });
      assert.equal(afterPurge.statusCode, 410, afterPurge.body);

      const revoked = await shareOf();
      const stranger = await createTestUser(ctx(), org, { privileges: ['collection'] });
      assert.equal(
        (
          await ctx().inject({
            method: 'DELETE',
            url: `/v1/collection/${revoked.collectionId}/share/${revoked.shareId}`,
            headers: stranger.headers,
          })
        ).statusCode,
        403,
      );
      const revoke = await ctx().inject({
        method: 'DELETE',
        url: `/v1/collection/${revoked.collectionId}/share/${revoked.shareId}`,
        headers: org.admin.headers,
      });
      assert.equal(revoke.statusCode, 204, revoke.body);
      assert.equal((await ctx().inject({ method: 'GET', url: revoked.url })).statusCode, 410);
      assert.equal(
        (
          await ctx().inject({
            method: 'DELETE',
            url: `/v1/collection/${revoked.collectionId}/share/${revoked.shareId}`,
            headers: org.admin.headers,
          })
        ).statusCode,
        404,
      );
    } finally {
      await worker.stop();
    }
  });
  it('an asset share is revoked by its id (DELETE, 204): every link it made answers 410 at once; links die when the asset goes to the recycle bin (defect 10)', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const a = await uploadAsset(ctx(), org, await jpeg(8, 8), 'a.jpg');
    const b = await uploadAsset(ctx(), org, await jpeg(8, 8), 'b.jpg');
    const share = async (headers = org.admin.headers) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/share',
        headers,
        payload: {
          sender: { name: 'A' },
          shareUsers: [{ email: 'out@example.test' }],
          assets: [a.objectId, b.objectId],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.match(body.shareId, /^[0-9a-f-]{36}$/);
      return {
        shareId: body.shareId as string,
        urls: body.links.map((l: { url: string }) => pathOf(l.url)) as string[],
      };
    };
    const first = await share();
    const second = await share();
    for (const url of [...first.urls, ...second.urls])
      assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 200, url);
    // The share id is signed into each link: moving a link to another share is a bad signature.
    const moved = first.urls[0]!.replace(first.shareId, second.shareId);
    assert.equal((await ctx().inject({ method: 'GET', url: moved })).statusCode, 403);
    const withoutShare = first.urls[0]!.replace(`share=${first.shareId}&`, '');
    assert.equal((await ctx().inject({ method: 'GET', url: withoutShare })).statusCode, 403);

    // Another organization's administrator: a 404 as for a missing share; a stranger without Share on the assets: 403.
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/asset/share/${first.shareId}`, headers: other.admin.headers }))
        .statusCode,
      404,
    );
    const stranger = await createTestUser(ctx(), org, { privileges: ['download'] });
    const refused = await ctx().inject({
      method: 'DELETE',
      url: `/v1/asset/share/${first.shareId}`,
      headers: stranger.headers,
    });
    assert.ok([403, 404].includes(refused.statusCode), refused.body);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: first.urls[0]! })).statusCode,
      200,
      'a refused revoke changes nothing',
    );

    const revoke = await ctx().inject({
      method: 'DELETE',
      url: `/v1/asset/share/${first.shareId}`,
      headers: org.admin.headers,
    });
    assert.equal(revoke.statusCode, 204, revoke.body);
    for (const url of first.urls) assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 410, url);
    for (const url of second.urls)
      assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 200, 'the other share still works');
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/asset/share/${first.shareId}`, headers: org.admin.headers }))
        .statusCode,
      204,
      'revoking twice changes nothing',
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/asset/share/${crypto.randomUUID()}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
    );

    // A sharer (Share on the assets through the Administrators group's template) revokes their own share.
    const sharer = await createTestUser(ctx(), org, {
      privileges: ['download'],
      groupIds: [org.groups.everyone, org.groups.administrators],
    });
    const own = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/share',
      headers: sharer.headers,
      payload: { sender: { name: 'S' }, shareUsers: [{ email: 'x@example.test' }], assets: [a.objectId] },
    });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/asset/share/${json(own).shareId}`, headers: sharer.headers }))
        .statusCode,
      204,
    );
    assert.equal((await ctx().inject({ method: 'GET', url: pathOf(json(own).links[0].url) })).statusCode, 410);

    // Dies with its source: the asset in the recycle bin ends the second share's link to it.
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${a.objectId}/delete`,
          headers: org.admin.headers,
          payload: { action: 'delete' },
        })
      ).statusCode,
      200,
    );
    assert.equal((await ctx().inject({ method: 'GET', url: second.urls[0]! })).statusCode, 404);
    assert.equal((await ctx().inject({ method: 'GET', url: second.urls[1]! })).statusCode, 200);
  });

  it('a public story-board link stops showing an asset once it is in the recycle bin, and dies with a revoke (defect 10)', async () => {
    const org = await createTestOrg(ctx());
    const worker = assetWorker(ctx());
    try {
      const asset = await uploadAsset(ctx(), org, await jpeg(32, 32), 'sb.jpg');
      await worker.drain();
      const board = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/storyboards',
          headers: org.admin.headers,
          payload: { title: 'B', status: 'published', blocks: [{ type: 'asset', assetId: asset.objectId }] },
        }),
      );
      const link = json(
        await ctx().inject({
          method: 'POST',
          url: `/v1/storyboards/${board.id}/links`,
          headers: org.admin.headers,
          payload: {},
        }),
      );
      const base = pathOf(link.url);
      const rendition = `${base}/assets/${asset.objectId}/imageThumb`;
      assert.equal((await ctx().inject({ method: 'GET', url: rendition })).statusCode, 200);
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${asset.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        200,
      );
      assert.equal((await ctx().inject({ method: 'GET', url: rendition })).statusCode, 404);
      assert.doesNotMatch(
        (await ctx().inject({ method: 'GET', url: `${base}/view` })).body,
        new RegExp(asset.objectId),
      );
      assert.equal(
        (
          await ctx().inject({
            method: 'DELETE',
            url: `/v1/storyboards/${board.id}/links/${link.id}`,
            headers: org.admin.headers,
          })
        ).statusCode,
        204,
      );
      assert.equal((await ctx().inject({ method: 'GET', url: `${base}/view` })).statusCode, 404);
    } finally {
      await worker.stop();
    }
  });
});
