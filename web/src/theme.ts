/** light, dark or the system's: a class on <html> that the stylesheet reads */
export function applyTheme(theme: string) {
  const root = document.documentElement
  root.classList.toggle('theme-dark', theme === 'dark')
  root.classList.toggle('theme-light', theme === 'light')
}
