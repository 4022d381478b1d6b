/** Prints rows as aligned columns (the first row is the header). */
export function printTable(table: string[][]) {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  for (const row of table)
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd()}\n`,
    )
}
