import type { Clock } from '../../src/lib/time.js'

/** A clock tests can move forward; starts at real time so ISO dates look normal. */
export class TestClock implements Clock {
  private offset = 0
  now(): number {
    return Date.now() + this.offset
  }
  advance(ms: number): void {
    this.offset += ms
  }
}
