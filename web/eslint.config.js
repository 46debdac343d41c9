// The app's lint: typescript-eslint's type-checked recommended rules (so
// `no-floating-promises` and `no-misused-promises` see every promise the app
// starts; the plain JavaScript scripts and benchmarks get the untyped ones)
// and React's hooks rules (eslint-plugin-react-hooks 7: the rules of hooks,
// exhaustive deps and the compiler's checks of purity, refs and state in
// effects).
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'e2e/artifacts/**', 'test-results/**', 'playwright-report/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.e2e.json'], tsconfigRootDir: import.meta.dirname },
    },
  },
  { files: ['**/*.{js,mjs}'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
