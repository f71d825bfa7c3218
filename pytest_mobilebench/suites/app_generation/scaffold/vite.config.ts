// Clean scaffold used by pytest-mobilebench's app_generation build axis (MobileForge, seed 002 section 4.1).
// node_modules is a symlink to a shared per-machine install, so Vite's cache lives inside the project.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import tailwindcss from "@tailwindcss/vite";

export default defineConfig({
  plugins: [react(), tailwindcss()],
  cacheDir: ".vite-cache",
  logLevel: "info",
  build: { outDir: "dist", emptyOutDir: true },
});
