/**
 * Admin actions check their caller in the admin service itself, not only in the route hook: a
 * route, job or command that called the service for a non-admin would get 403, not the action.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import { AppError } from '../../src/http/errors.js'
import * as admin from '../../src/modules/admin/service.js'
import * as modlog from '../../src/modules/modlog/index.js'
import * as users from '../../src/modules/users/service.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()

const refused = (error: unknown) => error instanceof AppError && error.statusCode === 403 && error.code === 'forbidden'

test('every admin service action refuses a caller who is not a platform admin; an admin passes (positive control)', async () => {
  const [boss, mallory, victim] = [await server.createAdmin(), await server.registerUser(), await server.registerUser()]
  const asRow = async (id: number) => (await users.findById(server.ctx, id))!
  const [bossRow, malloryRow] = [await asRow(boss.id), await asRow(mallory.id)]

  await assert.rejects(admin.listUsers(server.ctx, malloryRow, {}, 1, 20), refused)
  await assert.rejects(modlog.listModLog(server.ctx, malloryRow, 1, 20), refused)
  await assert.rejects(admin.ban(server.ctx, malloryRow, victim.id, 'no reason'), refused)
  await assert.rejects(admin.unban(server.ctx, malloryRow, victim.id), refused)
  await assert.rejects(admin.setRole(server.ctx, malloryRow, mallory.id, true), refused)
  await assert.rejects(
    server.ctx.db.transaction().execute((trx) => modlog.recordModeration(trx, malloryRow, 'user.ban', victim.id, null, 0)),
    refused,
  )
  // nothing happened: the victim is active, mallory is not an admin, the log is empty
  assert.equal((await asRow(victim.id)).is_active, 1)
  assert.equal((await asRow(mallory.id)).is_admin, 0)
  assert.equal((await modlog.listModLog(server.ctx, bossRow, 1, 20)).total, 0)

  // the same calls by an admin go through
  assert.ok((await admin.listUsers(server.ctx, bossRow, {}, 1, 20)).total >= 3)
  await admin.ban(server.ctx, bossRow, victim.id, 'spam')
  assert.equal((await asRow(victim.id)).is_active, 0)
  assert.equal((await modlog.listModLog(server.ctx, bossRow, 1, 20)).items[0].action, 'user.ban')
})

test('an admin who was banned meanwhile is refused by the service too', async () => {
  const [boss, other] = [await server.createAdmin(), await server.createAdmin()]
  const otherRow = (await users.findById(server.ctx, other.id))!
  assert.ok((await admin.listUsers(server.ctx, otherRow, {}, 1, 5)).total >= 2, 'an active admin may list')
  await admin.ban(server.ctx, (await users.findById(server.ctx, boss.id))!, other.id, 'rogue')
  const banned = (await users.findById(server.ctx, other.id))!
  await assert.rejects(admin.listUsers(server.ctx, banned, {}, 1, 5), refused)
})
