// The official OpenAI Node SDK as a real client: streams one chat completion through the gateway
// and prints what it reassembled as one JSON line.
//   node tests/harness/openai_stream.mjs BASE_URL API_KEY MODEL
import OpenAI from "openai";

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
try {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: "Say hello." }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let chunks = 0;
  let usage = null;
  for await (const chunk of stream) {
    chunks += 1;
    text += chunk.choices?.[0]?.delta?.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  console.log(JSON.stringify({ ok: true, text, chunks, usage }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e), status: e.status ?? null }));
}
