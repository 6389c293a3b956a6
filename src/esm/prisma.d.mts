export * from '../cjs/prisma.js'
