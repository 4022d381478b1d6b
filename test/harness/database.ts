/**
 * A fresh database per test file: a temporary SQLite file by default, or — when TEST_DATABASE_URL
 * is set — a new PostgreSQL database created next to it and dropped afterwards.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export interface TestDatabase {
  url: string
  dialect: 'sqlite' | 'postgres'
  drop(): Promise<void>
}

export const testDatabaseUrl = process.env.TEST_DATABASE_URL || null
export const testRedisUrl = process.env.TEST_REDIS_URL || null

export async function createTestDatabase(dataDir: string): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    const file = path.join(dataDir, 'tern.db')
    return { url: `sqlite:${file}`, dialect: 'sqlite', drop: async () => {} }
  }
  const name = `tern_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: testDatabaseUrl })
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(testDatabaseUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    dialect: 'postgres',
    drop: async () => {
      const client = new pg.Client({ connectionString: testDatabaseUrl })
      await client.connect()
      try {
        await client.query(`drop database if exists ${name} with (force)`)
      } finally {
        await client.end()
      }
    },
  }
}

export function tempDir(prefix = 'tern-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}
