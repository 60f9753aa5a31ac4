/**
 * The AI SDK turn of `tests/_ai_sdk.ts` in readable words, exported to a
 * Trace server's `/v1/traces`. The trace pages are expected to show what it
 * maps: kinds, the tool, models, tokens, user and thread.
 */

import { AI_SDK_TURN, runAiSdkApp } from "../_ai_sdk.ts";
import { producer } from "../otlp_producers_support.ts";

export { AI_SDK_TURN } from "../_ai_sdk.ts";

/** Runs the turn with its spans exported to `origin` (a Trace server). */
export async function runAiSdkTurn(origin: string): Promise<void> {
  await runAiSdkApp(
    producer({ "service.name": AI_SDK_TURN.application_id }, origin),
    {
      prompt: "What is the weather in Paris?",
      city: "Paris",
      sky: "sunny",
      answer: "It is sunny in Paris.",
      embedValues: ["tea", "coffee"],
      vectorValue: 0.25,
    },
  );
}
