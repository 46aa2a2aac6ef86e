// A grpc-go client of TurnService for the interop tests: one streaming turn that asks for a
// client-executed tool, answered through SubmitToolResults. It prints one JSON line per event
// (kind, cursor, and the fields the test checks) so the test asserts on what the server sent.
// With -approval the tool needs approval: the client approves through DecideToolCalls once the
// turn parks, then answers once it parks on the result, both through -answer-addr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tetherv1 "tether.local/test/interop/go/gen/tether/v1"
)

type line struct {
	Kind     string   `json:"kind"`
	Cursor   uint64   `json:"cursor"`
	TurnID   string   `json:"turn_id,omitempty"`
	Text     string   `json:"text,omitempty"`
	CallID   string   `json:"call_id,omitempty"`
	Name     string   `json:"name,omitempty"`
	Args     string   `json:"arguments_json,omitempty"`
	Output   string   `json:"output,omitempty"`
	Outcome  string   `json:"outcome,omitempty"`
	Value    string   `json:"value,omitempty"`
	Accepted []string `json:"accepted_call_ids,omitempty"`
	Pending  []string `json:"pending_call_ids,omitempty"`
	Approval []string `json:"approval_call_ids,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Messages []entry  `json:"messages,omitempty"`
}

// One message of the typed transcript, as the test reads it.
type entry struct {
	Role     string   `json:"role"`
	Parts    []string `json:"parts"`
	TurnID   string   `json:"turn_id"`
	Revision uint64   `json:"revision"`
}

// printTranscript reads the session's committed transcript, typed, and prints it as one line.
func printTranscript(ctx context.Context, conn *grpc.ClientConn, session string, out *json.Encoder) error {
	got, err := tetherv1.NewSessionServiceClient(conn).GetSession(ctx, &tetherv1.GetSessionRequest{
		SessionId: session, IncludeMessages: true,
	})
	if err != nil {
		return fmt.Errorf("GetSession: %w", err)
	}
	l := line{Kind: "transcript"}
	for _, m := range got.GetTranscript() {
		e := entry{Role: m.GetRole().String(), TurnID: m.GetTurnId(), Revision: m.GetRevision()}
		for _, p := range m.GetParts() {
			switch p.GetKind().(type) {
			case *tetherv1.MessagePart_Text:
				e.Parts = append(e.Parts, "text")
			case *tetherv1.MessagePart_ToolCall:
				e.Parts = append(e.Parts, "tool_call")
			case *tetherv1.MessagePart_ToolResult:
				e.Parts = append(e.Parts, "tool_result")
			case *tetherv1.MessagePart_Reasoning:
				e.Parts = append(e.Parts, "reasoning")
			case *tetherv1.MessagePart_Image:
				e.Parts = append(e.Parts, "image")
			}
		}
		l.Messages = append(l.Messages, e)
	}
	return out.Encode(l)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "server address")
	session := flag.String("session", "go-interop", "session id")
	prompt := flag.String("prompt", `/tool lookup {"key":"go"}`, "user text")
	answer := flag.String("answer", "from-go", "the tool's output")
	approval := flag.Bool("approval", false, "the tool needs approval")
	answerAddr := flag.String("answer-addr", "", "send answers to this replica (default -addr)")
	flag.Parse()
	if *answerAddr == "" {
		*answerAddr = *addr
	}
	if err := run(*addr, *answerAddr, *session, *prompt, *answer, *approval); err != nil {
		fmt.Fprintln(os.Stderr, "go client:", err)
		os.Exit(1)
	}
}

func run(addr, answerAddr, session, prompt, answer string, approval bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	turns := tetherv1.NewTurnServiceClient(conn)
	other, err := grpc.NewClient(answerAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer other.Close()
	answers := tetherv1.NewTurnServiceClient(other)
	stream, err := turns.StreamTurn(ctx, &tetherv1.StreamTurnRequest{
		SessionId: session,
		Input:     []*tetherv1.InputPart{{Kind: &tetherv1.InputPart_Text{Text: prompt}}},
		ClientTools: []*tetherv1.ToolDefinition{{
			Name:                 "lookup",
			Description:          "Looks a key up on the client.",
			ParametersJsonSchema: `{"type":"object","properties":{"key":{"type":"string"}}}`,
			RequiresApproval:     approval,
		}},
	})
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return printTranscript(ctx, conn, session, out)
		}
		if err != nil {
			return err
		}
		e := resp.GetEvent()
		l := line{Cursor: e.GetCursor(), TurnID: e.GetTurnId()}
		switch ev := e.GetEvent().(type) {
		case *tetherv1.TurnEvent_TurnStarted:
			l.Kind = "turn_started"
		case *tetherv1.TurnEvent_TextDelta:
			l.Kind, l.Text = "text_delta", ev.TextDelta.GetText()
		case *tetherv1.TurnEvent_ToolApprovalRequested:
			r := ev.ToolApprovalRequested
			l.Kind, l.CallID, l.Name, l.Args = "tool_approval_requested", r.GetCallId(), r.GetName(), r.GetArgumentsJson()
		case *tetherv1.TurnEvent_TurnResumed:
			l.Kind, l.Reason = "turn_resumed", ev.TurnResumed.GetReason().String()
		case *tetherv1.TurnEvent_TurnParked:
			p := ev.TurnParked
			l.Kind, l.Pending, l.Approval = "turn_parked", p.GetPendingCallIds(), p.GetApprovalCallIds()
			if len(p.GetApprovalCallIds()) > 0 {
				decisions := []*tetherv1.ToolCallDecision{}
				for _, id := range p.GetApprovalCallIds() {
					decisions = append(decisions, &tetherv1.ToolCallDecision{CallId: id, Approve: true, Reason: "go"})
				}
				ack, err := answers.DecideToolCalls(ctx, &tetherv1.DecideToolCallsRequest{
					SessionId: session, TurnId: e.GetTurnId(), Decisions: decisions,
				})
				if err != nil {
					return fmt.Errorf("DecideToolCalls: %w", err)
				}
				l.Accepted = ack.GetAcceptedCallIds()
			} else if approval && len(p.GetPendingCallIds()) > 0 {
				results := []*tetherv1.ToolResult{}
				for _, id := range p.GetPendingCallIds() {
					results = append(results, &tetherv1.ToolResult{CallId: id, Output: answer})
				}
				ack, err := answers.SubmitToolResults(ctx, &tetherv1.SubmitToolResultsRequest{
					SessionId: session, TurnId: e.GetTurnId(), Results: results,
				})
				if err != nil {
					return fmt.Errorf("SubmitToolResults: %w", err)
				}
				l.Accepted = ack.GetAcceptedCallIds()
			}
		case *tetherv1.TurnEvent_ToolCallRequested:
			r := ev.ToolCallRequested
			l.Kind, l.CallID, l.Name, l.Args = "tool_call_requested", r.GetCallId(), r.GetName(), r.GetArgumentsJson()
			if approval {
				break // answered once the turn parks on it
			}
			ack, err := turns.SubmitToolResults(ctx, &tetherv1.SubmitToolResultsRequest{
				SessionId: session,
				TurnId:    e.GetTurnId(),
				Results:   []*tetherv1.ToolResult{{CallId: r.GetCallId(), Output: answer}},
			})
			if err != nil {
				return fmt.Errorf("SubmitToolResults: %w", err)
			}
			l.Accepted = ack.GetAcceptedCallIds()
		case *tetherv1.TurnEvent_ToolCallFinished:
			f := ev.ToolCallFinished
			l.Kind, l.CallID, l.Output = "tool_call_finished", f.GetCallId(), f.GetOutput()
		case *tetherv1.TurnEvent_UsageReported:
			l.Kind = "usage_reported"
		case *tetherv1.TurnEvent_TurnCompleted:
			l.Kind = "turn_completed"
			if f := ev.TurnCompleted.GetOutcome().GetFinished(); f != nil {
				l.Outcome, l.Value = "finished", f.GetValue()
			} else if s := ev.TurnCompleted.GetOutcome().GetStopped(); s != nil {
				l.Outcome, l.Value = "stopped", s.GetMessage()
			} else if f := ev.TurnCompleted.GetOutcome().GetFailed(); f != nil {
				l.Outcome, l.Value = "failed", f.GetMessage()
			}
		default:
			l.Kind = fmt.Sprintf("%T", ev)
		}
		if err := out.Encode(l); err != nil {
			return err
		}
	}
}
