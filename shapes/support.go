package shapes

// Request shapes of contact, status and support. Severity, status, channel
// and priority are free strings: the document does not show their allowed
// values. Unknown keys are ignored.

// DefaultContactSubject is ContactMessageRequest.Subject when omitted.
const DefaultContactSubject = "General inquiry"

// ContactMessageRequest is a message sent through the contact form.
type ContactMessageRequest struct {
	Name      string  `json:"name" validate:"required,min=2,max=120"`
	Email     string  `json:"email" validate:"required,min=3,max=320"`
	Message   string  `json:"message" validate:"required,min=20,max=4000"`
	Subject   string  `json:"subject" validate:"min=3,max=160"`
	ServiceID *string `json:"serviceId" validate:"omitnil,max=100"` // default null
	Company   string  `json:"company" validate:"max=200"`           // default ""
}

// SetDefaults sets the documented defaults.
func (r *ContactMessageRequest) SetDefaults() {
	*r = ContactMessageRequest{Subject: DefaultContactSubject}
}

// StatusIncidentCreateRequest opens a status incident (all fields required).
type StatusIncidentCreateRequest struct {
	Title              string   `json:"title" validate:"required,min=3,max=200"`
	Message            string   `json:"message" validate:"required,min=3,max=8000"`
	Severity           string   `json:"severity" validate:"required"`
	AffectedComponents []string `json:"affectedComponents" validate:"required,min=1,max=20"`
}

// StatusIncidentUpdateRequest updates a status incident (both required).
type StatusIncidentUpdateRequest struct {
	Status  string `json:"status" validate:"required"`
	Message string `json:"message" validate:"required,min=3,max=8000"`
}

// StatusSubscriptionRequest subscribes a target to status updates.
type StatusSubscriptionRequest struct {
	Channel           string  `json:"channel" validate:"required"`
	Target            string  `json:"target" validate:"required,min=3,max=2000"`
	VerificationEmail *string `json:"verificationEmail" validate:"omitnil,max=320"` // default null
}

// SupportMessageRequest adds a message to a support ticket.
type SupportMessageRequest struct {
	Message string `json:"message" validate:"required,min=2,max=8000"`
}

// SupportTicketCreateRequest opens a support ticket.
type SupportTicketCreateRequest struct {
	Subject   string  `json:"subject" validate:"required,min=3,max=160"`
	Message   string  `json:"message" validate:"required,min=10,max=8000"`
	ServiceID *string `json:"serviceId" validate:"omitnil,max=100"` // default null
	OrderID   *string `json:"orderId" validate:"omitnil,max=100"`   // default null
	Priority  string  `json:"priority"`                             // default "normal"
}

// SetDefaults sets the documented defaults.
func (r *SupportTicketCreateRequest) SetDefaults() {
	*r = SupportTicketCreateRequest{Priority: "normal"}
}

// SupportTicketUpdateRequest changes a ticket's status, optionally with a
// message.
type SupportTicketUpdateRequest struct {
	Status  string  `json:"status" validate:"required"`
	Message *string `json:"message" validate:"omitnil,max=8000"` // default null
}
