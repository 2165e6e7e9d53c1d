// Progress lines on stderr for long runs: rewritten in place on a terminal, one line every few seconds otherwise.
export class Progress {
  private lastPrint = 0
  private shown = false

  constructor(private readonly enabled: boolean, private readonly everyMsWhenPiped = 5000) {}

  update(text: string): void {
    if (!this.enabled) return
    const now = Date.now()
    if (process.stderr.isTTY) {
      process.stderr.write(`\r\x1b[K${text}`)
      this.shown = true
    } else if (now - this.lastPrint >= this.everyMsWhenPiped) {
      process.stderr.write(`${text}\n`)
      this.lastPrint = now
    }
  }

  /** A line that always shows (phase changes). */
  note(text: string): void {
    if (!this.enabled) return
    this.clear()
    process.stderr.write(`${text}\n`)
  }

  clear(): void {
    if (this.shown && process.stderr.isTTY) process.stderr.write('\r\x1b[K')
    this.shown = false
  }
}
