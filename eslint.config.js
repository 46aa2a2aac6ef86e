// Lint config: type-aware rules for src, test and bench; generated code is excluded.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "src/gen/**",
      "node_modules/**",
      "helm/**",
      "**/*.js",
      ".tmp/**",
      "test/interop/**/gen/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Prettier owns layout; this rule flags the way Prettier breaks long member chains.
      "no-unexpected-multiline": "off",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["src/engine/**/*.ts", "src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: ["node:*", "ioredis", "@connectrpc/*", "*/gen/*", "*/store/*", "*/api/*"] },
      ],
    },
  },
);
