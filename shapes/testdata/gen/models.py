"""Pydantic v2 models mirroring the Go shapes (the specification as a
FastAPI service would declare it). Field order is declaration order, which
decides the order of errors."""
import datetime
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

Forbid = ConfigDict(extra="forbid")

PhotoStyle = Literal["nature", "urban", "vintage", "iconic", "artistic", "waterside", "minimal", "adventure"]
Category = Literal["viewpoint", "park", "attraction", "museum", "artwork", "historic", "nature", "recreation",
                   "cafe", "restaurant", "bar", "shop"]
GeoKind = Literal["lake", "sea", "river", "peak", "forest", "waterside"]
SubjectRole = Literal["scene", "portrait-background", "existing-subject"]
Combination = Literal["all", "any"]
Tool = Literal["search_places", "search_geography", "search_features", "sample_geography", "sample_near_places",
               "feature_points", "filter_geography", "filter_features", "union", "intersection", "area_imagery",
               "point_imagery", "center_imagery", "collect_images", "score_images", "rank_results"]
TAG_KEY = r"^[A-Za-z0-9_:.-]+$"
DOMAIN_NAME = r"^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$"
DomainName = Annotated[str, Field(max_length=253, pattern=DOMAIN_NAME)]
PoiQuery = Annotated[str, Field(min_length=1, max_length=200)]


class ClaimVerificationRequest(BaseModel):
    model_config = Forbid
    claim: str = Field(min_length=3, max_length=4000)
    asOf: Optional[datetime.date] = None
    jurisdiction: Optional[str] = Field(None, max_length=100)
    freshnessHours: Optional[int] = Field(168, ge=1, le=8760)
    sourcePolicy: Literal["official_only", "authoritative", "open_web"] = "authoritative"
    minimumSources: int = Field(2, ge=1, le=10)
    maxSources: int = Field(8, ge=1, le=20)
    allowedDomains: list[DomainName] = Field(default_factory=list, max_length=100)
    blockedDomains: list[DomainName] = Field(default_factory=list, max_length=100)
    includeConflicts: bool = True
    language: str = Field("auto", min_length=2, max_length=35)


Score = Annotated[int, Field(ge=0, le=5)]


class NicheDraft(BaseModel):
    title: str = Field(min_length=8, max_length=180)
    problem: str = Field(min_length=30, max_length=2000)
    buyer: str = Field(min_length=3, max_length=180)
    category: str = Field(min_length=2, max_length=80)
    solution_hypothesis: str = Field(min_length=20, max_length=2000)
    pain: Score
    frequency: Score
    willingness_to_pay: Score
    reachable_buyers: Score
    feasibility: Score
    competition_gap: Score
    evaluation_notes: str = Field(min_length=30, max_length=4000)
    signal_ids: list[str] = Field(min_length=1, max_length=100)
    publish: bool = False


class TagFilter(BaseModel):
    model_config = Forbid
    key: str = Field(min_length=1, max_length=80, pattern=TAG_KEY)
    value: Optional[str] = Field(None, max_length=160)
    required: bool = True


class NumericFilter(BaseModel):
    model_config = Forbid
    key: str = Field(min_length=1, max_length=80, pattern=TAG_KEY)
    minimum: Optional[float] = None
    maximum: Optional[float] = None


class OSMFeatureQuery(BaseModel):
    model_config = Forbid
    label: str = Field(min_length=1, max_length=120)
    kind: Literal["tagged", "intersection"] = "tagged"
    filters: list[TagFilter] = Field(default_factory=list, max_length=6)
    numericFilters: list[NumericFilter] = Field(default_factory=list, max_length=4)
    proximityMeters: int = Field(150, ge=0, le=500)
    selectionHints: list[Literal["large-footprint", "small-footprint", "more-storeys"]] = Field(
        default_factory=list, max_length=3)


class Requirement(BaseModel):
    model_config = Forbid
    expression: str = Field(min_length=1, max_length=400)
    strength: Literal["required", "preferred", "forbidden"]
    route: Literal["places", "geography", "features", "visual"]
    evidence: Literal["visual", "spatial", "provider", "combined"] = "visual"
    stepIds: list[str] = Field(max_length=8)


class SearchStep(BaseModel):
    model_config = Forbid
    id: str = Field(pattern=r"^[a-zA-Z][a-zA-Z0-9_]{0,39}$")
    tool: Tool
    inputs: list[str] = Field(default_factory=list, max_length=6)
    queries: list[str] = Field(default_factory=list, max_length=4)
    geographicKinds: list[GeoKind] = Field(default_factory=list, max_length=6)
    osmFeatures: list[OSMFeatureQuery] = Field(default_factory=list, max_length=6)
    combination: Combination = "all"
    exclude: bool = False
    discoveryHints: bool = False
    weights: list[int] = Field(default_factory=list, max_length=6)
    visualIntent: str = Field("", max_length=1000)
    radiusMeters: int = Field(750, ge=100, le=2000)


class SearchProgram(BaseModel):
    model_config = Forbid
    steps: list[SearchStep] = Field(min_length=1, max_length=24)
    output: str = Field(min_length=1, max_length=40)


class SearchBranch(BaseModel):
    model_config = Forbid
    poiQueries: list[str] = Field(default_factory=list, max_length=4)
    geographicKinds: list[GeoKind] = Field(default_factory=list, max_length=6)
    geographicCombination: Combination = "all"
    osmFeatures: list[OSMFeatureQuery] = Field(default_factory=list, max_length=6)
    featureCombination: Combination = "all"
    visualIntent: str = Field("", max_length=1000)


class RouteEndpoint(BaseModel):
    model_config = Forbid
    query: Optional[str] = Field(None, min_length=1, max_length=200)
    lat: Optional[float] = Field(None, ge=-85, le=85)
    lon: Optional[float] = Field(None, ge=-180, le=180)
    label: Optional[str] = Field(None, max_length=350)


class RouteRequest(BaseModel):
    model_config = Forbid
    origin: Optional[RouteEndpoint] = None
    destination: RouteEndpoint
    travelMode: Literal["walk", "drive"] = "walk"
    corridorMeters: int = Field(50, ge=50, le=2000)


class ExploreRequest(BaseModel):
    lat: float = Field(ge=-85, le=85)
    lon: float = Field(ge=-180, le=180)
    route: Optional[RouteRequest] = None
    searchProgram: Optional[SearchProgram] = None
    searchBranches: list[SearchBranch] = Field(default_factory=list, max_length=6)
    query: str = Field("", max_length=1000)
    radius: int = Field(1000, ge=100, le=20000)
    limit: int = Field(3, ge=1, le=5, deprecated=True)
    photoStyles: Optional[list[PhotoStyle]] = Field(None, min_length=1, max_length=8)
    categories: Optional[list[Category]] = Field(None, min_length=1, max_length=8)
    poiQueries: list[PoiQuery] = Field(default_factory=list, max_length=4)
    geographicCombination: Combination = "all"
    featureCombination: Combination = "all"
    osmFeatures: list[OSMFeatureQuery] = Field(default_factory=list, max_length=6)
    geographicKinds: list[GeoKind] = Field(default_factory=list, max_length=6)
    requirements: list[Requirement] = Field(default_factory=list, max_length=16)
    subjectRole: SubjectRole = "scene"
    scoringIntent: str = Field("", max_length=1000)
    selectedPoiIds: Optional[list[str]] = Field(None, max_length=50)
    poiCatalogToken: Optional[str] = Field(None, max_length=40000)
    preferences: str = Field("Scenic, distinctive public places for photography", max_length=500)


class SearchTaskRequest(ExploreRequest):
    pass


class IntentRequest(BaseModel):
    lat: float = Field(ge=-85, le=85)
    lon: float = Field(ge=-180, le=180)
    route: Optional[RouteRequest] = None
    subjectRole: SubjectRole = "scene"
    query: str = Field("", max_length=1000)
    radius: int = Field(1000, ge=100, le=20000)
    limit: int = Field(3, ge=1, le=5, deprecated=True)
    photoStyles: list[PhotoStyle] = Field(default_factory=list, max_length=8)
    preferences: str = Field("", max_length=500)
    categories: Optional[list[Category]] = None
    poiQueries: list[PoiQuery] = Field(default_factory=list, max_length=4)
    geographicKinds: list[GeoKind] = Field(default_factory=list, max_length=6)
    osmFeatures: list[OSMFeatureQuery] = Field(default_factory=list, max_length=6)
    geographicCombination: Combination = "all"
    featureCombination: Combination = "all"
    scoringIntent: str = Field("", max_length=1000)


class SearchParameters(BaseModel):
    model_config = Forbid
    lat: float = Field(ge=-85, le=85)
    lon: float = Field(ge=-180, le=180)
    radius: int = Field(5000, ge=100, le=20000)
    searchProgram: Optional[SearchProgram] = None
    searchBranches: list[SearchBranch] = Field(default_factory=list, max_length=6)
    poiQueries: list[str] = Field(default_factory=list, max_length=4)
    geographicKinds: list[GeoKind] = Field(default_factory=list, max_length=6)
    geographicCombination: Combination = "all"
    featureCombination: Combination = "all"
    osmFeatures: list[OSMFeatureQuery] = Field(default_factory=list, max_length=6)
    photoStyles: Optional[list[str]] = Field(None, max_length=8)
    categories: Optional[list[str]] = Field(None, max_length=8)
    requirements: list[Requirement] = Field(default_factory=list, max_length=16)
    subjectRole: SubjectRole = "scene"
    scoringIntent: str = Field("", max_length=1000)
    preferences: str = Field("", max_length=500)


class PoiViewRequest(BaseModel):
    searchId: str = Field(min_length=1, max_length=80)
    poiId: str = Field(min_length=1, max_length=500)
    heading: float = Field(ge=0, lt=360)
    pitch: float = Field(ge=-90, le=90)
    fov: float = Field(ge=30, le=120)
    scope: Literal["place", "selfie"] = "place"
    framing: Literal["auto", "current", "90", "60", "45"] = "current"


class HiddenPoiRequest(BaseModel):
    searchId: str = Field(min_length=1, max_length=80)
    poiId: str = Field(min_length=1, max_length=500)
    hidden: bool = True


class HistoryItem(BaseModel):
    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9:_-]+$")
    created: int = Field(ge=0)
    label: str = Field(max_length=1000)
    radius: int = Field(ge=100, le=20000)
    checked: bool = True
    result: dict[str, Any]


class PublishRequest(BaseModel):
    kind: Literal["search", "place", "photo"]
    id: str = Field(min_length=1, max_length=80)
    poiId: Optional[str] = Field(None, max_length=500)


class RemovedItemRequest(BaseModel):
    kind: Literal["search", "portrait"]
    id: str = Field(min_length=1, max_length=80)
    removed: bool = True


class ReactionRequest(BaseModel):
    kind: Literal["like", "favorite"]
    active: bool
    poiId: str = Field("", max_length=500)


class CommentRequest(BaseModel):
    text: str = Field(min_length=1, max_length=2000)
    poiId: str = Field("", max_length=500)


class WithdrawRequest(BaseModel):
    id: str = Field(min_length=1, max_length=80)


class ThumbnailRequest(BaseModel):
    sourceUrls: list[str] = Field(max_length=24)


class TransferRequest(BaseModel):
    state: str = Field(min_length=32, max_length=128)
    ticket: str = Field("", max_length=128)


class LicenseRequest(BaseModel):
    licenseNumber: str = Field(min_length=1, max_length=8)


class AvatarUpload(BaseModel):
    name: str = Field(min_length=1, max_length=80)
    image: str = Field(max_length=28000000)


class ContactMessageRequest(BaseModel):
    name: str = Field(min_length=2, max_length=120)
    email: str = Field(min_length=3, max_length=320)
    message: str = Field(min_length=20, max_length=4000)
    subject: str = Field("General inquiry", min_length=3, max_length=160)
    serviceId: Optional[str] = Field(None, max_length=100)
    company: str = Field("", max_length=200)


class CustomerCreateRequest(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    email: Optional[str] = Field(None, max_length=320)


class StatusIncidentCreateRequest(BaseModel):
    title: str = Field(min_length=3, max_length=200)
    message: str = Field(min_length=3, max_length=8000)
    severity: str
    affectedComponents: list[str] = Field(min_length=1, max_length=20)


class StatusIncidentUpdateRequest(BaseModel):
    status: str
    message: str = Field(min_length=3, max_length=8000)


class StatusSubscriptionRequest(BaseModel):
    channel: str
    target: str = Field(min_length=3, max_length=2000)
    verificationEmail: Optional[str] = Field(None, max_length=320)


class SupportMessageRequest(BaseModel):
    message: str = Field(min_length=2, max_length=8000)


class SupportTicketCreateRequest(BaseModel):
    subject: str = Field(min_length=3, max_length=160)
    message: str = Field(min_length=10, max_length=8000)
    serviceId: Optional[str] = Field(None, max_length=100)
    orderId: Optional[str] = Field(None, max_length=100)
    priority: str = "normal"


class SupportTicketUpdateRequest(BaseModel):
    status: str
    message: Optional[str] = Field(None, max_length=8000)


class QuoteRequest(BaseModel):
    tier: str = "standard"


class Capability(BaseModel):
    model_config = Forbid
    id: str
    summary: str
    status: str
    method: str
    path: str


class CapabilitiesResponse(BaseModel):
    model_config = Forbid
    service: str
    version: str
    capabilities: list[Capability]


class ValidationError(BaseModel):
    type: str
    loc: list[Union[str, int]]
    msg: str
    input: Any = None
    ctx: Optional[dict[str, Any]] = None


class HTTPValidationError(BaseModel):
    detail: Optional[list[ValidationError]] = None


# Shapes of routes the interface documents do not define (curation,
# commerce, subscriptions), declared the way the Go types are: "required" in
# a Go tag means the key must be present; other fields default to Go's zero
# value, which Pydantic does not validate.
SignalKind = Literal["complaint", "question", "review", "job_post", "feature_request", "forum_post", "news_report",
                     "regulatory_notice", "recall_notice", "market_report"]


class NicheCreateRequest(BaseModel):
    operationId: Optional[str] = Field(None, min_length=1, max_length=128)
    actor: str = Field("", max_length=120)
    reason: str = Field("", max_length=2000)
    draft: NicheDraft


class NicheReviseRequest(BaseModel):
    operationId: Optional[str] = Field(None, min_length=1, max_length=128)
    actor: str = Field("", max_length=120)
    reason: str = Field("", max_length=2000)
    expectedRevision: int = Field(ge=1)
    draft: NicheDraft


class NicheTransitionRequest(BaseModel):
    operationId: Optional[str] = Field(None, min_length=1, max_length=128)
    actor: str = Field("", max_length=120)
    reason: str = Field("", max_length=2000)
    expectedRevision: int = Field(ge=1)


class NicheSignalInput(BaseModel):
    id: Optional[str] = Field(None, min_length=36, max_length=36)
    kind: SignalKind
    sourceUrl: str = Field(min_length=8, max_length=2048)
    origin: str = Field(min_length=1, max_length=64)
    externalId: str = Field("", max_length=2048)
    title: str = Field(min_length=3, max_length=300)
    excerpt: str = Field("", max_length=1000)
    observedAt: str = Field(min_length=10, max_length=40)
    collectedAt: Optional[str] = Field(None, min_length=10, max_length=40)
    license: str = Field(min_length=1, max_length=200)
    attribution: str = Field("", max_length=200)
    engagement: dict[str, int] = Field(None, max_length=8)
    state: Optional[Literal["pending", "accepted"]] = None


class NicheSignalBatch(BaseModel):
    signals: list[NicheSignalInput] = Field(min_length=1, max_length=1000)


class NicheModerationRequest(BaseModel):
    state: Literal["pending", "accepted", "rejected"]
    note: str = Field("", max_length=1000)
    actor: str = Field("", max_length=120)


class ReceiptVerifyRequest(BaseModel):
    receipt: dict[str, Any]


class SubscriptionClaimRequest(BaseModel):
    sessionId: str = Field(min_length=1, max_length=255)


SHAPES = {m.__name__: m for m in [
    NicheDraft, TagFilter, NumericFilter, OSMFeatureQuery, Requirement, SearchStep, SearchProgram, SearchBranch,
    RouteEndpoint, RouteRequest, ExploreRequest, SearchTaskRequest, IntentRequest, SearchParameters,
    PoiViewRequest, HiddenPoiRequest, HistoryItem, PublishRequest, RemovedItemRequest, ReactionRequest,
    CommentRequest, WithdrawRequest, ThumbnailRequest, TransferRequest, LicenseRequest, AvatarUpload,
    ContactMessageRequest, CustomerCreateRequest, StatusIncidentCreateRequest, StatusIncidentUpdateRequest,
    StatusSubscriptionRequest, SupportMessageRequest, SupportTicketCreateRequest, SupportTicketUpdateRequest,
    QuoteRequest, CapabilitiesResponse, Capability, ClaimVerificationRequest, HTTPValidationError,
    ValidationError,
    NicheCreateRequest, NicheReviseRequest, NicheTransitionRequest, NicheSignalInput, NicheSignalBatch,
    NicheModerationRequest, ReceiptVerifyRequest, SubscriptionClaimRequest,
]}


# Query parameters of the niche routes, as FastAPI declares them.
class NicheListQuery(BaseModel):
    q: str = Field("", max_length=150)
    category: Optional[str] = Field(None, max_length=80)
    sort: Literal["recent", "score"] = "score"
    limit: int = Field(20, ge=1, le=100)


class NicheSearchQuery(BaseModel):
    q: str = Field(min_length=3, max_length=150)
    category: Optional[str] = Field(None, max_length=80)
    sort: Literal["recent", "score"] = "score"
    limit: int = Field(20, ge=1, le=20)


class CustomerOrdersQuery(BaseModel):
    limit: int = Field(50, ge=1, le=200)
    offset: int = Field(0, ge=0, le=100000000)
    cursor: str = Field("", max_length=512)


class NicheSignalListQuery(BaseModel):
    state: Optional[Literal["pending", "accepted", "rejected"]] = None
    origin: Optional[str] = Field(None, max_length=64)
    limit: int = Field(100, ge=1, le=500)


class AdminOrderSummaryQuery(BaseModel):
    days: int = Field(30, ge=1, le=3650)


QUERIES = {m.__name__: m for m in [NicheListQuery, NicheSearchQuery, CustomerOrdersQuery, NicheSignalListQuery,
                                   AdminOrderSummaryQuery]}
