// Replace this placeholder with the app's screens and routes.
import { Route, Routes } from "react-router-dom";

export default function App() {
  return (
    <Routes>
      <Route path="*" element={<main className="p-4">Not built yet</main>} />
    </Routes>
  );
}
