// The few icons the console draws, as inline SVG: a glyph of a font (⧉) shows as an empty box where
// the system's fonts lack it, and an icon package would ship hundreds for these two.
const common = { width: 16, height: 16, viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor', strokeWidth: 2, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': true } as const;

export function CopyIcon() {
  return (
    <svg {...common} data-icon="copy">
      <rect x="9" y="9" width="12" height="12" rx="2" />
      <path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1" />
    </svg>
  );
}

export function CheckIcon() {
  return (
    <svg {...common} data-icon="check">
      <path d="M20 6 9 17l-5-5" />
    </svg>
  );
}
