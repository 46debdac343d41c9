// The kit's lint: typescript-eslint's type-checked recommended rules (with
// the types of tsconfig.test.json, so `no-floating-promises` and
// `no-misused-promises` see every promise the code starts) and React's hooks
// rules (eslint-plugin-react-hooks 7: the rules of hooks, exhaustive deps and
// the compiler's checks of purity, refs and state in effects).
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'core/src/generated/**', 'node_modules/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['react/src/**/*.{ts,tsx}', 'react/test/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
