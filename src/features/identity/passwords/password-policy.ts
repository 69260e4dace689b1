import { readFileSync } from 'node:fs';

/**
 * Passwords too common to accept, whatever their length: a list shipped in the repo
 * (common-passwords.txt, a few thousand entries from well-known patterns), compared in lower case.
 */
const COMMON = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim().toLowerCase())
    .filter((line) => line !== '' && !line.startsWith('#')),
);
for (const extra of [
  'password',
  'password1',
  'password123',
  '12345678',
  '123456789',
  '1234567890',
  'qwertyuiop',
  'qwerty123',
  'iloveyou',
  'admin123',
  'letmein1',
  'welcome1',
  'abc12345',
  'football',
  'baseball',
  'sunshine',
  'princess',
  'passw0rd',
  '11111111',
  '00000000',
])
  COMMON.add(extra);

/** How many common passwords the policy refuses (for docs and tests). */
export const COMMON_PASSWORD_COUNT = COMMON.size;

export function isCommonPassword(password: string): boolean {
  return COMMON.has(password.toLowerCase());
}

/** Null when acceptable; otherwise what is wrong (length 8–1024, not common, not the username). */
export function passwordProblem(password: string, username?: string): string | null {
  if (password.length < 8) return 'must be at least 8 characters long';
  if (password.length > 1024) return 'must be at most 1024 characters long';
  if (COMMON.has(password.toLowerCase())) return 'is too common';
  if (username && password.toLowerCase() === username.toLowerCase()) return 'must differ from the username';
  return null;
}
