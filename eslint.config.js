// Flat config: typescript-eslint's type-checked rules over src, test and bench; plain .mjs scripts without types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.ci/**', 'tmp/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  // The house's size limits: no source file over 400 lines; in the configuration and the walk
  // engine, where the logic is densest, no function over 80.
  { files: ['src/**/*.ts'], rules: { 'max-lines': ['error', { max: 400 }] } },
  {
    files: ['src/config/**/*.ts', 'src/collectors/walk/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  // Plain Node scripts beside shell scripts (deploy/container/check.mjs): linted without types.
  { files: ['**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
