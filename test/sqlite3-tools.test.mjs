// The tools on top of the sqlite3 module (Knex, Sequelize, TypeORM 0.3), given resqlite/sqlite3 (docs/integrations.md): a
// program per tool (a migration, models with a relation, CRUD, a transaction rolled back, a
// savepoint, a raw query, a constraint error) gives the results written below, and, where the
// real sqlite3 package is installed (bench/node_modules), the same results through it.

import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const require = createRequire(import.meta.url)
const resqlite3 = require('../dist/cjs/sqlite3.js')
const realPath = new URL('../bench/node_modules/sqlite3', import.meta.url).pathname
const real = existsSync(realPath) ? require(realPath) : undefined

const dir = mkdtempSync(join(tmpdir(), 'resqlite-sqlite3-tools-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `db${files++}.db`)

async function knexProgram(driver) {
  const knexFactory = require('knex')
  const Sqlite3Client = require('knex/lib/dialects/sqlite3')
  // Knex's sqlite3 client with its driver module replaced: the one changed line.
  class Client extends Sqlite3Client {
    _driver() {
      return driver
    }
  }
  const knex = knexFactory({ client: Client, connection: { filename: file() }, useNullAsDefault: true })
  const out = {}
  try {
    await knex.schema.createTable('authors', (t) => {
      t.increments('id')
      t.string('name').notNullable().unique()
    })
    await knex.schema.createTable('books', (t) => {
      t.increments('id')
      t.string('title')
      t.integer('year')
      t.integer('author_id').references('authors.id').onDelete('CASCADE')
    })
    out.inserted = await knex('authors').insert([{ name: 'ada' }, { name: 'bob' }], ['id'])
    await knex('books').insert([
      { title: 'a1', year: 1990, author_id: 1 },
      { title: 'a2', year: 2000, author_id: 1 },
      { title: 'b1', year: 2010, author_id: 2 },
    ])
    out.updated = await knex('books')
      .where('year', '<', 2001)
      .update({ year: knex.raw('year + 1') })
    out.joined = await knex('authors')
      .join('books', 'books.author_id', 'authors.id')
      .select('authors.name')
      .count('books.id as n')
      .groupBy('authors.name')
      .orderBy('authors.name')
    await knex.schema.alterTable('books', (t) => t.dropColumn('year'))
    out.columns = Object.keys(await knex('books').columnInfo())
    await assert.rejects(
      knex.transaction(async (trx) => {
        await trx('authors').insert({ name: 'cy' })
        await trx
          .transaction(async (inner) => {
            await inner('authors').insert({ name: 'dee' })
            throw new Error('inner fails')
          })
          .catch(() => {})
        out.inTransaction = (await trx('authors').count('* as n'))[0].n
        throw new Error('rolled back')
      }),
      /rolled back/,
    )
    out.afterRollback = (await knex('authors').count('* as n'))[0].n
    out.unique = await knex('authors')
      .insert({ name: 'ada' })
      .then(
        () => 'no error',
        (e) => e.code,
      )
    out.deleted = await knex('authors').where({ name: 'bob' }).del()
    out.raw = await knex.raw('SELECT title FROM books ORDER BY title')
  } finally {
    await knex.destroy()
  }
  return out
}

const knexExpected = {
  inserted: [{ id: 1 }, { id: 2 }],
  updated: 2,
  joined: [
    { name: 'ada', n: 2 },
    { name: 'bob', n: 1 },
  ],
  columns: ['id', 'title', 'author_id'],
  inTransaction: 3,
  afterRollback: 2,
  unique: 'SQLITE_CONSTRAINT',
  deleted: 1,
  // Foreign keys are off, as in sqlite3 (Knex does not turn them on): no cascade.
  raw: [{ title: 'a1' }, { title: 'a2' }, { title: 'b1' }],
}

async function sequelizeProgram(driver) {
  const { Sequelize, DataTypes, QueryTypes } = require('sequelize')
  // The one changed line: dialectModule.
  const sequelize = new Sequelize({ dialect: 'sqlite', storage: file(), dialectModule: driver, logging: false })
  const out = {}
  try {
    const Author = sequelize.define(
      'Author',
      { name: { type: DataTypes.STRING, allowNull: false, unique: true } },
      { timestamps: false },
    )
    const Book = sequelize.define('Book', { title: DataTypes.STRING, year: DataTypes.INTEGER }, { timestamps: false })
    Author.hasMany(Book, { onDelete: 'CASCADE' })
    Book.belongsTo(Author)
    await sequelize.sync()
    const ada = await Author.create({ name: 'ada' })
    const bob = await Author.create({ name: 'bob' })
    await Book.bulkCreate([
      { title: 'a1', year: 1990, AuthorId: ada.id },
      { title: 'a2', year: 2000, AuthorId: ada.id },
      { title: 'b1', year: 2010, AuthorId: bob.id },
    ])
    out.ids = [ada.id, bob.id]
    const [updated] = await Book.update({ year: 2001 }, { where: { title: 'a2' } })
    out.updated = updated
    const authors = await Author.findAll({ include: Book, order: [['name'], [Book, 'title']] })
    out.included = authors.map((a) => ({ name: a.name, books: a.Books.map((b) => [b.title, b.year]) }))
    await assert.rejects(
      sequelize.transaction(async (t) => {
        await Author.create({ name: 'cy' }, { transaction: t })
        await sequelize
          .transaction({ transaction: t }, async (inner) => {
            await Author.create({ name: 'dee' }, { transaction: inner })
            throw new Error('inner fails')
          })
          .catch(() => {})
        out.inTransaction = await Author.count({ transaction: t })
        throw new Error('rolled back')
      }),
      /rolled back/,
    )
    out.afterRollback = await Author.count()
    out.unique = await Author.create({ name: 'ada' }).then(
      () => 'no error',
      (e) => e.name,
    )
    out.deleted = await Author.destroy({ where: { name: 'bob' } })
    out.raw = await sequelize.query('SELECT title FROM Books ORDER BY title', { type: QueryTypes.SELECT })
  } finally {
    await sequelize.close()
  }
  return out
}

const sequelizeExpected = {
  ids: [1, 2],
  updated: 1,
  included: [
    {
      name: 'ada',
      books: [
        ['a1', 1990],
        ['a2', 2001],
      ],
    },
    { name: 'bob', books: [['b1', 2010]] },
  ],
  inTransaction: 3,
  afterRollback: 2,
  unique: 'SequelizeUniqueConstraintError',
  deleted: 1,
  raw: [{ title: 'a1' }, { title: 'a2' }],
}

async function typeormProgram(driver) {
  require('reflect-metadata')
  const { DataSource, EntitySchema } = require('typeorm')
  const Author = new EntitySchema({
    name: 'Author',
    tableName: 'authors',
    columns: { id: { type: Number, primary: true, generated: true }, name: { type: String, unique: true } },
    relations: { books: { type: 'one-to-many', target: 'Book', inverseSide: 'author' } },
  })
  const Book = new EntitySchema({
    name: 'Book',
    tableName: 'books',
    columns: {
      id: { type: Number, primary: true, generated: true },
      title: { type: String },
      year: { type: Number },
    },
    relations: {
      author: {
        type: 'many-to-one',
        target: 'Author',
        inverseSide: 'books',
        onDelete: 'CASCADE',
        joinColumn: { name: 'author_id' },
      },
    },
  })
  // TypeORM wants a migration's class name to end in a timestamp.
  class Init1700000000000 {
    name = 'Init1700000000000'
    async up(q) {
      await q.query('CREATE TABLE authors (id INTEGER PRIMARY KEY AUTOINCREMENT, name varchar NOT NULL UNIQUE)')
      await q.query(
        'CREATE TABLE books (id INTEGER PRIMARY KEY AUTOINCREMENT, title varchar NOT NULL, year integer NOT NULL, ' +
          'author_id integer REFERENCES authors(id) ON DELETE CASCADE)',
      )
    }
    async down(q) {
      await q.query('DROP TABLE books')
      await q.query('DROP TABLE authors')
    }
  }
  // TypeORM's sqlite type with its driver module given: the one changed line.
  const ds = new DataSource({
    type: 'sqlite',
    database: file(),
    driver,
    entities: [Author, Book],
    migrations: [Init1700000000000],
  })
  await ds.initialize()
  const out = {}
  try {
    out.migrations = (await ds.runMigrations()).map((m) => m.name)
    const authors = ds.getRepository('Author')
    const books = ds.getRepository('Book')
    const ada = await authors.save({ name: 'ada' })
    const bob = await authors.save({ name: 'bob' })
    out.ids = [ada.id, bob.id]
    await books.save([
      { title: 'a1', year: 1990, author: ada },
      { title: 'a2', year: 2000, author: ada },
      { title: 'b1', year: 2010, author: bob },
    ])
    const update = books
      .createQueryBuilder()
      .update()
      .set({ year: () => 'year + 1' })
      .where('year < :y', { y: 2001 })
    out.updated = (await update.execute()).affected
    const loaded = await authors.find({ relations: { books: true }, order: { name: 'ASC', books: { title: 'ASC' } } })
    out.loaded = loaded.map((a) => ({ name: a.name, books: a.books.map((b) => [b.title, b.year]) }))
    out.rolledBack = await ds
      .transaction(async (manager) => {
        await manager.getRepository('Book').save({ title: 'tx', year: 2020, author: bob })
        out.inTransaction = await manager.getRepository('Book').count()
        throw new Error('roll back')
      })
      .catch((error) => error.message)
    out.afterRollback = await books.count()
    out.unique = await authors.save({ name: 'ada' }).then(
      () => 'saved',
      (error) => `${error.constructor.name} ${error.driverError?.code}`,
    )
    out.raw = await ds.query('SELECT title FROM books WHERE author_id = ? ORDER BY title', [ada.id])
    await authors.delete({ id: bob.id })
    out.afterCascade = await books.count()
    await ds.undoLastMigration()
    out.reverted = await ds.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'books'")
  } finally {
    await ds.destroy()
  }
  return out
}

const typeormExpected = {
  migrations: ['Init1700000000000'],
  ids: [1, 2],
  updated: 2,
  loaded: [
    {
      name: 'ada',
      books: [
        ['a1', 1991],
        ['a2', 2001],
      ],
    },
    { name: 'bob', books: [['b1', 2010]] },
  ],
  inTransaction: 4,
  rolledBack: 'roll back',
  afterRollback: 3,
  unique: 'QueryFailedError SQLITE_CONSTRAINT',
  raw: [{ title: 'a1' }, { title: 'a2' }],
  afterCascade: 2,
  reverted: [{ n: 0 }],
}

test('Knex with a client whose driver is resqlite/sqlite3', async () => {
  assert.deepEqual(await knexProgram(resqlite3), knexExpected)
})

test('Sequelize with dialectModule: resqlite/sqlite3', async () => {
  assert.deepEqual(await sequelizeProgram(resqlite3), sequelizeExpected)
})

test('TypeORM 0.3 with driver: resqlite/sqlite3', async () => {
  assert.deepEqual(await typeormProgram(resqlite3), typeormExpected)
})

test('the same programs through the real sqlite3 give the same results', {
  skip: real === undefined && 'bench/node_modules/sqlite3 is not installed',
}, async () => {
  assert.deepEqual(await knexProgram(real), knexExpected)
  assert.deepEqual(await sequelizeProgram(real), sequelizeExpected)
  assert.deepEqual(await typeormProgram(real), typeormExpected)
})
