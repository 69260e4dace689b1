/** Passwords too common to accept, whatever their length. Extend with a shipped list. */
const COMMON = new Set([
  'password', 'password1', 'password123', '12345678', '123456789', '1234567890', 'qwertyuiop', 'qwerty123', 'iloveyou',
  'admin123', 'letmein1', 'welcome1', 'abc12345', 'football', 'baseball', 'sunshine', 'princess', 'passw0rd', '11111111', '00000000',
]);

/** Null when acceptable; otherwise what is wrong (length 8–1024, not common, not the username). */
export function passwordProblem(password: string, username?: string): string | null {
  if (password.length < 8) return 'must be at least 8 characters long';
  if (password.length > 1024) return 'must be at most 1024 characters long';
  if (COMMON.has(password.toLowerCase())) return 'is too common';
  if (username && password.toLowerCase() === username.toLowerCase()) return 'must differ from the username';
  return null;
}
