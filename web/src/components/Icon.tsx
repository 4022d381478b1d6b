/**
 * The app's icons: inline SVG drawn here (no icon font, no request to anyone, and the same on
 * every system, which emoji are not). Decorative: the control around an icon carries the label.
 */
const PATHS = {
  chats: 'M4 5h16v10H9l-5 4z',
  new: 'M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4',
  search: 'M10.5 4a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13zM15.5 15.5 20 20',
  profile: 'M12 4a4 4 0 1 1 0 8 4 4 0 0 1 0-8zM4 20c1-4 4-6 8-6s7 2 8 6',
  pin: 'M9 4h6l-1 6 3 3H7l3-3zM12 13v7',
  archive: 'M4 5h16v4H4zM6 9v10h12V9M10 13h4',
  info: 'M12 3a9 9 0 1 1 0 18 9 9 0 0 1 0-18zM12 11v6M12 7.5v.5',
  attach: 'M16 7l-7.5 7.5a2 2 0 0 0 3 3L19 10a4 4 0 0 0-6-6l-7.5 7.5a6 6 0 0 0 8.5 8.5L20 14',
  back: 'M20 12H5M11 6l-6 6 6 6',
  group: 'M9 5a3 3 0 1 1 0 6 3 3 0 0 1 0-6zM3 19c.7-3 3-5 6-5s5.3 2 6 5M16 5.5a3 3 0 0 1 0 5.5M18 14c1.5.7 2.6 2.4 3 5',
  channel: 'M4 10v4h3l6 4V6L7 10zM16.5 9a4 4 0 0 1 0 6',
  close: 'M6 6l12 12M18 6L6 18',
  more: 'M5 12h.01M12 12h.01M19 12h.01',
  poll: 'M5 20V11M12 20V4M19 20v-6',
  phone: 'M5 4h4l2 5-2.5 1.5a11 11 0 0 0 5 5L15 13l5 2v4a2 2 0 0 1-2 2A16 16 0 0 1 3 6a2 2 0 0 1 2-2',
  video: 'M3 7h12v10H3zM15 10l6-3v10l-6-3',
  story: 'M12 3a9 9 0 1 1-9 9M12 8v8M8 12h8',
} as const

export type IconName = keyof typeof PATHS

export function Icon({ name, size = 22 }: { name: IconName; size?: number }) {
  return (
    <svg
      class="svg-icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      stroke-width={name === 'more' ? 3 : 1.8}
      stroke-linecap="round"
      stroke-linejoin="round"
    >
      <path d={PATHS[name]} />
    </svg>
  )
}
